package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/nats-io/nats.go/jetstream"
)

// shadowYAML is acme with a read rule and an approval policy in shadow
// mode; enforcedYAML the same file with both enforced.
var (
	shadowYAML = strings.Replace(strings.Replace(acmeYAML,
		`read_rules: ["tools.call:read_*", "apps.call:conn-7/list_*"]`,
		`read_rules: ["tools.call:read_*", "apps.call:conn-7/list_*", {match: "tools.call:lookup_*", mode: shadow}]`, 1),
		"    members:\n      - id: u-1\n", `    groups:
      - {id: finance, members: [u-1, u-2]}
    approval_policies:
      - {id: deploys, match: ["tools.call:deploy"], approvers: {group: finance}, approve: 2, mode: shadow}
    members:
      - id: u-1
`, 1)
	enforcedYAML = strings.ReplaceAll(strings.ReplaceAll(shadowYAML, ", mode: shadow}", "}"), `{match: "tools.call:lookup_*"}`, `"tools.call:lookup_*"`)
)

// Rules in shadow mode never decide; the record keeps what each would have
// done, /metrics counts them as agreeing or not, and a replay of the file
// with them enforced gives the same answer for each request.
func TestShadowModeAgreesWithReplay(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(shadowYAML))
	url := srv.URL
	admin, main := newClient(t, url, tokAdmin), newClient(t, url, tokMain)
	lookup := main.pending("tool", "lookup_order")
	deploy := main.pending()
	read := main.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}})
	shadowed := shadowedEvents(t, srv, 2)
	for _, rec := range []map[string]any{lookup, deploy} {
		if !shadowed[str(rec["id"])] {
			t.Errorf("no request.shadowed event of %s on the bus (got %v)", rec["tool"], shadowed)
		}
	}
	shadowOf := func(rec map[string]any) []domain.Shadow {
		var r domain.Request
		raw, _ := json.Marshal(rec)
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		return r.Shadow
	}
	wantShadow := map[string]domain.Shadow{
		str(lookup["id"]): {ID: "tools.call:lookup_*", Outcome: domain.StatusApproved},
		str(deploy["id"]): {ID: "deploys", Outcome: domain.StatusPending, Approver: &domain.Ref{Kind: domain.KindGroup, ID: "finance"}, RequiredApprovals: 2},
	}
	for _, rec := range []map[string]any{lookup, deploy} {
		got, want := shadowOf(rec), wantShadow[str(rec["id"])]
		if len(got) != 1 || got[0].ID != want.ID || got[0].Outcome != want.Outcome || !sameRef(got[0].Approver, want.Approver) || got[0].RequiredApprovals != want.RequiredApprovals {
			t.Errorf("%s: shadow %+v; want %+v", rec["tool"], got, want)
		}
		if a := rec["approver"].(map[string]any); a["kind"] != "person" || a["id"] != "u-1" {
			t.Errorf("%s waits on %v; a rule in shadow mode decided", rec["tool"], a)
		}
	}
	if _, ok := read["shadow"]; ok {
		t.Errorf("read_file: shadow %v; no rule in shadow mode matches it", read["shadow"])
	}
	metrics := admin.do("GET", "/metrics", nil).want(t, "metrics", http.StatusOK).raw
	for _, line := range []string{`countersign_shadow_total{agree="false",rule="deploys"} 1`, `countersign_shadow_total{agree="false",rule="tools.call:lookup_*"} 1`} {
		if !bytes.Contains(metrics, []byte(line)) {
			t.Errorf("/metrics lacks %s", line)
		}
	}

	eventually(t, 20*time.Second, "the three creations in the log", func() bool {
		log, _ := exportAudit(t, admin, "")
		return bytes.Count(log, []byte(`"revision":0,`)) == 3
	})
	if rep := replayOf(t, admin, shadowYAML); len(rep.Changes) != 0 {
		t.Errorf("the running config, in shadow: changes %+v; want none", rep.Changes)
	}
	rep := replayOf(t, admin, enforcedYAML)
	if len(rep.Changes) != 2 {
		t.Fatalf("enforced: changes %+v; want the lookup and the deploy", rep.Changes)
	}
	for _, c := range rep.Changes {
		want := wantShadow[string(c.Request)]
		if c.New.Status != want.Outcome || !sameRef(c.New.Approver, want.Approver) || (want.RequiredApprovals > 0 && c.New.RequiredApprovals != want.RequiredApprovals) {
			t.Errorf("%s: replay says %+v, shadow mode said %+v", c.Capability, c.New, want)
		}
	}
}

// shadowedEvents reads n request.shadowed events from the bus's events
// stream and returns the ids of their requests.
func shadowedEvents(t *testing.T, srv *servertest.Server, n int) map[string]bool {
	t.Helper()
	js, err := srv.App.Broker.Connect("test-shadowed")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, events.EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.EventSubject("acme", events.TypeRequestShadowed)}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for len(got) < n {
		m, err := cons.Next(jetstream.FetchContext(ctx))
		if err != nil {
			t.Fatalf("request.shadowed events: %d of %d: %v", len(got), n, err)
		}
		if typ := m.Headers().Get("ce-type"); typ != events.TypeRequestShadowed {
			t.Errorf("ce-type %q; want %s", typ, events.TypeRequestShadowed)
		}
		got[m.Headers().Get("ce-subject")] = true
	}
	return got
}

func sameRef(a, b *domain.Ref) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
