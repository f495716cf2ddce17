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
	"github.com/countersign/countersign/kvstate"
)

// Authority never crosses members (SPEC §3): agents.delegate:B by A is
// denied by policy at submit when B works for another member, is A, or
// is above A in the chain A works in.

// delegateTo has c submit agents.delegate:target in session.
func delegateTo(c *client, target, session string) map[string]any {
	return c.submit(map[string]any{"capability": map[string]any{"action": "agents.delegate", "target": target},
		"arguments": map[string]any{"task": "x"}, "session": session})
}

// wantBarred checks that rec was denied by member u-1's policy at submit,
// never sent to a decider, with a note naming the rule.
func wantBarred(t *testing.T, what string, rec map[string]any) {
	t.Helper()
	if str(rec["status"]) != "denied" || by(rec) != "policy/u-1" {
		t.Errorf("%s: %s by %s, want denied by policy/u-1", what, rec["status"], by(rec))
	}
	if note := str(obj(rec["decision"])["note"]); !strings.Contains(note, "authority never crosses members") {
		t.Errorf("%s: note %q, want one naming the rule", what, note)
	}
	if rec["approver"] != nil {
		t.Errorf("%s: approver %s, want none", what, jsonString(rec["approver"]))
	}
}

// TestDelegationBarredAcrossMembers: the three bars, each denied by policy
// in the 201 with nothing in any inbox; agt_a above agt_b counts only in
// the session in which agt_b works for agt_a.
func TestDelegationBarredAcrossMembers(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	w.delegate(t, "agt_b", "ses-S", "once") // agt_b works for agt_a in ses-S
	var barred []string
	for _, tc := range []struct {
		name          string
		c             *client
		target, where string
	}{
		{"another member's agent", w.a, "agt_u2", "ses-X"},
		{"itself", w.a, "agt_a", "ses-X"},
		{"its parent", w.a, "agt_lead", "ses-X"},
		{"its delegator", w.b, "agt_a", "ses-S"},
		{"its delegator's parent", w.b, "agt_lead", "ses-S"},
	} {
		rec := delegateTo(tc.c, tc.target, tc.where)
		wantBarred(t, tc.name, rec)
		barred = append(barred, str(rec["id"]))
	}
	for _, c := range []*client{w.p1, w.p2, w.lead, w.a, w.boss} {
		items, _, _ := c.list("")
		for _, id := range ids(items) {
			if contains(barred, id) {
				t.Errorf("%s's inbox holds the barred %s", c.token, id)
			}
		}
	}
	if rec := delegateTo(w.b, "agt_a", "ses-other"); str(rec["status"]) != "pending" {
		t.Errorf("agt_b delegating to agt_a outside ses-S: %s by %s, want pending", rec["status"], by(rec))
	}
}

// TestCrossMemberDelegationAttack: agt_other (member u-1) hands session S
// to agt_u2 (u-2's agent). Before the bar u-1 allowed it and then approved
// agt_u2's wire_money in S, which u-2 never saw. Now the delegation is
// denied at once, and wire_money goes to u-2 alone.
func TestCrossMemberDelegationAttack(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	d := delegateTo(w.other, "agt_u2", "S")
	wantBarred(t, "agt_other's delegation to agt_u2", d)
	w.p1.answer(d, "allow", "once").wantProblem(t, "u-1 allows the delegation anyway", http.StatusConflict, "RequestConflict", "")
	if _, ok := w.srv.App.Service.Views().Delegation("acme", "agt_u2", "S"); ok {
		t.Fatal("a delegation of agt_u2 in S was stored")
	}

	wire := w.u2.submit(map[string]any{"tool": "wire_money", "arguments": map[string]any{"amount": 1000}, "session": "S"})
	wantRoute(t, "agt_u2's wire_money in S", wire, `["agt_u2"]`, `{"id":"u-2","kind":"person"}`)
	w.p1.answer(wire, "allow", "once").wantProblem(t, "u-1 approves wire_money", http.StatusNotFound, "RequestNotFound", "")
	w.p1.do("GET", "/v1/requests/"+str(wire["id"]), nil).wantProblem(t, "u-1 reads wire_money", http.StatusNotFound, "RequestNotFound", "")
	if items, _, _ := w.p1.list(""); contains(ids(items), str(wire["id"])) {
		t.Error("u-1's inbox holds agt_u2's wire_money")
	}
	if items, _, _ := w.p2.list(""); !contains(ids(items), str(wire["id"])) {
		t.Errorf("u-2's inbox %s lacks agt_u2's wire_money", jsonString(ids(items)))
	}
	got := w.p2.answer(wire, "allow", "once").want(t, "u-2 approves", http.StatusOK).body
	if by(got) != "person/u-2" {
		t.Errorf("wire_money decided by %s, want person/u-2", by(got))
	}
}

// TestCrossMemberDelegationEndsAtStart: delegated work across members that
// an earlier version stored in force is ended when the server starts, with
// a dev.countersign.delegation.ended entry in the audit log; delegated work
// within one member is left in force.
func TestCrossMemberDelegationEndsAtStart(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	w.delegate(t, "agt_b", "ses-kept", "once")
	store := w.srv.App.Service.Store()
	ctx := context.Background()
	at := time.Now().UTC().Format(time.RFC3339Nano)
	old := `{"tenant":"acme","agent":"agt_u2","delegator":"agt_other","session":"S","request_id":"` + string(domain.NewRequestID()) +
		`","brief":"wire it","created_at":"` + at + `","approved_at":"` + at + `","ended_at":null}`
	if _, err := store.Delegations().Put(ctx, kvstate.DelegationKey("acme", "agt_u2", "S"), []byte(old)); err != nil {
		t.Fatal(err)
	}

	w.srv.Restart(t)
	w.clients(t)
	d, _, err := w.srv.App.Service.Store().GetDelegation(ctx, "acme", "agt_u2", "S")
	if err != nil || d.EndedAt == nil {
		t.Fatalf("stored delegation of agt_u2 after start: %+v, %v; want ended", d, err)
	}
	if d, ok := w.srv.App.Service.Views().Delegation("acme", "agt_b", "ses-kept"); !ok || !d.Active() {
		t.Errorf("agt_b's delegation within member u-1: %+v, want in force", d)
	}
	w.other.do("DELETE", endPath("agt_u2", "S"), nil).wantProblem(t, "agt_other ends it after start", http.StatusNotFound, "NotFound", "")
	var entry []byte
	eventually(t, 20*time.Second, "the delegation.ended audit entry", func() bool {
		log, _ := exportAudit(t, w.admin, "")
		for _, line := range bytes.Split(log, []byte("\n")) {
			if bytes.Contains(line, []byte(`"type":"`+events.TypeDelegationEnded+`"`)) {
				entry = line
				return true
			}
		}
		return false
	})
	var e struct {
		Subject string `json:"subject"`
		Data    struct {
			Delegator string `json:"delegator"`
			Why       string `json:"why"`
		} `json:"data"`
	}
	if err := json.Unmarshal(entry, &e); err != nil || e.Subject != "agt_u2" || e.Data.Delegator != "agt_other" || !strings.Contains(e.Data.Why, "another member") {
		t.Errorf("audit entry %s (%v), want agt_u2's end by agt_other across members", entry, err)
	}
	wantRoute(t, "agt_u2 in S after start", w.u2.pending("session", "S"), `["agt_u2"]`, `{"id":"u-2","kind":"person"}`)
}
