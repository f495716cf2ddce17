package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// TestAPICancel: only the requester cancels; 200 with the record, then
// 409 on a terminal request (SPEC §4, §5).
func TestAPICancel(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	sub, main, person := newClient(t, url, tokSub), newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := sub.pending()
	path := "/v1/requests/" + str(rec["id"]) + "/cancel"

	main.do("POST", path, nil).wantProblem(t, "chain agent cancels", http.StatusForbidden, "Forbidden", "")
	newClient(t, url, tokQuickChild).do("POST", path, nil).wantProblem(t, "agent outside the chain cancels", http.StatusNotFound, "RequestNotFound", "")
	newClient(t, url, tokOther).do("POST", path, nil).wantProblem(t, "another member's agent cancels", http.StatusNotFound, "RequestNotFound", "")
	if got := num(sub.get(str(rec["id"]))["revision"]); got != 0 {
		t.Fatalf("refused cancels changed revision to %d", got)
	}

	r := sub.do("POST", path, nil).want(t, "requester cancels", http.StatusOK)
	got := r.body
	if str(got["status"]) != "cancelled" || num(got["revision"]) != 1 {
		t.Errorf("after cancel: status %v revision %v, want cancelled 1", got["status"], got["revision"])
	}
	d := obj(got["decision"])
	if str(d["status"]) != "cancelled" || jsonString(d["by"]) != `{"id":"agt_sub","kind":"agent"}` {
		t.Errorf("cancel decision = %s, want {cancelled, by agent agt_sub}", jsonString(d))
	}
	ts(t, "decided_at", d["decided_at"])
	sub.do("POST", path, nil).wantProblem(t, "second cancel", http.StatusConflict, "RequestConflict", "")
	sub.do("POST", path, `{}`).wantProblem(t, "cancel with an empty object", http.StatusConflict, "RequestConflict", "")
	newClient(t, url, tokProg).answer(got, "allow", "").wantProblem(t, "answer after cancel", http.StatusConflict, "RequestConflict", "")
	if again := person.get(str(rec["id"])); num(again["revision"]) != 1 || str(again["status"]) != "cancelled" {
		t.Errorf("record after refused calls: %v", again)
	}

	read := main.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}})
	main.do("POST", "/v1/requests/"+str(read["id"])+"/cancel", nil).wantProblem(t, "cancel an approved request", http.StatusConflict, "RequestConflict", "")
	main.do("POST", "/v1/requests/req_01JC0000000000000000000000/cancel", nil).wantProblem(t, "cancel a missing request", http.StatusNotFound, "RequestNotFound", "")
}

// TestAPIClaim: a claim succeeds once, sets claimed_at and bumps revision;
// refusals are 409 with a reason and change nothing (SPEC §4).
func TestAPIClaim(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	claim := func(c *client, rec map[string]any, digest any) resp {
		return c.do("POST", "/v1/requests/"+str(rec["id"])+"/claim", map[string]any{"call_digest": digest})
	}
	wantRefused := func(rec map[string]any, digest any, reason string) {
		t.Helper()
		before := main.get(str(rec["id"]))
		r := claim(main, rec, digest)
		r.wantProblem(t, "claim "+reason, http.StatusConflict, "RequestConflict", "")
		if got := str(r.body["reason"]); got != reason {
			t.Errorf("claim reason %q, want %q; %s", got, reason, r.raw)
		}
		after := main.get(str(rec["id"]))
		if jsonString(after) != jsonString(before) {
			t.Errorf("a refused claim (%s) changed the record:\nbefore %v\n after %v", reason, before, after)
		}
	}

	pend := main.pending()
	wantRefused(pend, pend["call_digest"], "not_approved")
	approved := person.answer(pend, "allow", "").want(t, "approve", http.StatusOK).body
	wantRefused(approved, "sha256:"+strings.Repeat("0", 64), "digest_mismatch")
	claim(newClient(t, url, tokPerson), approved, approved["call_digest"]).wantProblem(t, "person claims", http.StatusForbidden, "Forbidden", "")
	claim(newClient(t, url, tokProg), approved, approved["call_digest"]).wantProblem(t, "agent outside the chain claims", http.StatusNotFound, "RequestNotFound", "")
	main.do("POST", "/v1/requests/"+str(approved["id"])+"/claim", `{}`).wantProblem(t, "claim without call_digest", http.StatusBadRequest, "InvalidRequest", "call_digest")

	r := claim(main, approved, approved["call_digest"]).want(t, "claim", http.StatusOK)
	if r.body["claimed_at"] == nil || num(r.body["revision"]) != num(approved["revision"])+1 || str(r.body["status"]) != "approved" {
		t.Errorf("after claim: claimed_at %v revision %v status %v; want set, %d, approved", r.body["claimed_at"], r.body["revision"], r.body["status"], num(approved["revision"])+1)
	}
	claimedAt := ts(t, "claimed_at", r.body["claimed_at"])
	if claimedAt.After(ts(t, "expires_at", obj(r.body["decision"])["expires_at"])) {
		t.Errorf("claimed after expires_at")
	}
	wantRefused(approved, approved["call_digest"], "already_claimed")

	// An approval by steps 1–4 is claimed the same way.
	read := main.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}})
	claim(main, read, read["call_digest"]).want(t, "claim a read", http.StatusOK)

	denied := main.pending()
	person.answer(denied, "deny", "").want(t, "deny", http.StatusOK)
	wantRefused(denied, denied["call_digest"], "not_approved")
}

// TestAPIClaimExpiredApproval: once decision.expires_at passes, the claim
// is 409 approval_expired and changes nothing.
func TestAPIClaimExpiredApproval(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, servertest.WithConfig(strings.Replace(acmeYAML, "approval_ttl: 5m", "approval_ttl: 1s", 1))).URL
	main := newClient(t, url, tokMain)
	rec := main.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}})
	exp := ts(t, "expires_at", obj(rec["decision"])["expires_at"])
	if got := exp.Sub(ts(t, "decided_at", obj(rec["decision"])["decided_at"])); got != time.Second {
		t.Errorf("expires_at - decided_at = %v, want approval_ttl 1s", got)
	}
	time.Sleep(time.Until(exp) + 100*time.Millisecond)
	r := main.do("POST", "/v1/requests/"+str(rec["id"])+"/claim", map[string]any{"call_digest": rec["call_digest"]})
	r.wantProblem(t, "claim after expires_at", http.StatusConflict, "RequestConflict", "")
	if got := str(r.body["reason"]); got != "approval_expired" {
		t.Errorf("reason %q, want approval_expired", got)
	}
	if got := main.get(str(rec["id"])); got["claimed_at"] != nil || num(got["revision"]) != 0 {
		t.Errorf("the refused claim changed the record: claimed_at %v revision %v", got["claimed_at"], got["revision"])
	}
}

// TestAPIExpiry: a request with timeout 1s becomes expired with
// decision {expired, by deadline}; answering or cancelling it is 409.
func TestAPIExpiry(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.pending("timeout", "1s")
	deadline := ts(t, "deadline_at", rec["deadline_at"])
	// A long-poll wakes on expiry (a terminal status).
	r := main.do("GET", "/v1/requests/"+str(rec["id"])+"?wait=10s", nil).want(t, "wait for expiry", http.StatusOK)
	got := r.body
	if str(got["status"]) != "expired" {
		t.Errorf("wait=10s over the deadline returned status %v, want expired", got["status"])
		eventually(t, 10*time.Second, "expiry", func() bool { got = main.get(str(rec["id"])); return str(got["status"]) == "expired" })
	}
	d := obj(got["decision"])
	if str(d["status"]) != "expired" || jsonString(d["by"]) != `{"kind":"deadline"}` {
		t.Errorf("expired decision = %s, want {status expired, by {kind deadline}}", jsonString(d))
	}
	if at := ts(t, "decided_at", d["decided_at"]); at.Before(deadline) {
		t.Errorf("expired at %v, before deadline_at %v", at, deadline)
	}
	if num(got["revision"]) != 1 {
		t.Errorf("revision %v after expiry, want 1", got["revision"])
	}
	for _, k := range []string{"note", "scope", "expires_at"} {
		if v, ok := d[k]; ok && v != nil && v != "" {
			t.Errorf("expired decision has %s = %v", k, v)
		}
	}
	person.answer(got, "allow", "").wantProblem(t, "answer an expired request", http.StatusConflict, "RequestConflict", "")
	person.do("POST", "/v1/requests/"+str(rec["id"]), map[string]any{"expected": 0, "decision": "deny"}).wantProblem(t, "deny an expired request at its old revision", http.StatusConflict, "RequestConflict", "")
	main.do("POST", "/v1/requests/"+str(rec["id"])+"/cancel", nil).wantProblem(t, "cancel an expired request", http.StatusConflict, "RequestConflict", "")
	if after := main.get(str(rec["id"])); num(after["revision"]) != 1 || str(after["status"]) != "expired" {
		t.Errorf("refused calls changed the expired record: %v", after)
	}
}

// TestAPIReviewTimeout: an agent decider that does not answer within its
// review_timeout (1s) passes the request up (SPEC §3).
func TestAPIReviewTimeout(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	child, person := newClient(t, url, tokQuickChild), newClient(t, url, tokPerson)
	rec := child.pending()
	if got := jsonString(rec["approver"]); got != `{"id":"agt_quick","kind":"agent"}` {
		t.Fatalf("approver = %s, want agt_quick", got)
	}
	var got map[string]any
	eventually(t, 10*time.Second, "review timeout passes the request up", func() bool {
		got = child.get(str(rec["id"]))
		return jsonString(got["approver"]) == `{"id":"u-1","kind":"person"}`
	})
	if str(got["status"]) != "pending" || num(got["revision"]) != 1 || len(objects(got["endorsements"])) != 0 {
		t.Errorf("after review timeout: status %v revision %v endorsements %v; want pending 1 []", got["status"], got["revision"], got["endorsements"])
	}
	if el := time.Since(ts(t, "created_at", rec["created_at"])); el > 6*time.Second {
		t.Errorf("passed up after %v, want about 1s", el)
	}
	// The person, now the approver, answers.
	person.answer(got, "allow", "").want(t, "person answers", http.StatusOK)
}
