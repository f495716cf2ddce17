package mcpproxy_test

import (
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// A refund a person approved with a smaller amount runs upstream with that
// amount (SPEC §5, "Approve with edits"), and the original digest can no
// longer be claimed.
func TestProxyForwardsTheEditedArguments(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	cs, up := connect(t, srv.URL, servertest.TokenMain)
	ch := callAsync(cs, "issue_refund", map[string]any{"payment_id": "payment_123", "amount": 4900, "currency": "GBP"})
	r := a.AwaitPending(servertest.TokenPerson, "issue_refund")
	edited := a.Edit(servertest.TokenPerson, r.ID, map[string]any{"payment_id": "payment_123", "amount": 1000, "currency": "GBP"})
	if got, isErr := text(t, ch); isErr || got != "refunded" {
		t.Fatalf("got %q (isError %v), want the upstream's answer", got, isErr)
	}
	if got := up.got("issue_refund"); len(got) != 1 || got[0] != `{"amount":1000,"currency":"GBP","payment_id":"payment_123"}` {
		t.Errorf("upstream got %q, want the edited refund once", got)
	}
	if rec := a.Get(servertest.TokenMain, r.ID); rec.ClaimedAt == nil || rec.CallDigest != edited.CallDigest {
		t.Errorf("record: claimed %v digest %s, want claimed with the edited digest %s", rec.ClaimedAt, rec.CallDigest, edited.CallDigest)
	}
	code, body := a.Do("POST", "/v1/requests/"+string(r.ID)+"/claim", servertest.TokenMain, map[string]any{"call_digest": r.CallDigest})
	if code != 409 {
		t.Errorf("claim with the original digest: %d %s, want 409", code, body)
	}
}
