package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// delegationYAML: agt_a (under agt_lead) delegates work to agt_b (under
// agt_boss), whose own chain never meets agt_a's; all four work for member
// u-1 (authority never crosses members, SPEC §3). agt_other works for u-1
// too, agt_u2 for u-2.
const delegationYAML = `tenants:
  - id: acme
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
    agents:
      - {id: agt_lead, member: u-1}
      - {id: agt_a, member: u-1, parent: agt_lead}
      - {id: agt_boss, member: u-1}
      - {id: agt_b, member: u-1, parent: agt_boss, brief: "What agt_boss gave agt_b."}
      - {id: agt_other, member: u-1}
      - {id: agt_u2, member: u-2}
    tokens:
      - {token: d-p1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: d-p2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: d-admin, principal: "service:ops", scopes: [admin]}
      - {token: d-lead, principal: "agent:agt_lead", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: d-a, principal: "agent:agt_a", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: d-boss, principal: "agent:agt_boss", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: d-b, principal: "agent:agt_b", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: d-other, principal: "agent:agt_other", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: d-u2, principal: "agent:agt_u2", scopes: [requests:write, approvals:read, approvals:write]}
`

// delegationWorld is a running server of delegationYAML and its clients.
type delegationWorld struct {
	srv                                        *servertest.Server
	p1, p2, admin, lead, a, boss, b, other, u2 *client
}

func startDelegation(t *testing.T) *delegationWorld {
	t.Helper()
	srv := servertest.Start(t, servertest.WithConfig(delegationYAML))
	w := &delegationWorld{srv: srv}
	w.clients(t)
	return w
}

func (w *delegationWorld) clients(t *testing.T) {
	u := w.srv.URL
	w.p1, w.p2, w.admin = newClient(t, u, "d-p1"), newClient(t, u, "d-p2"), newClient(t, u, "d-admin")
	w.lead, w.a, w.boss, w.b = newClient(t, u, "d-lead"), newClient(t, u, "d-a"), newClient(t, u, "d-boss"), newClient(t, u, "d-b")
	w.other, w.u2 = newClient(t, u, "d-other"), newClient(t, u, "d-u2")
}

// delegate has agt_a ask for agents.delegate:target in session, and, if it
// is pending, agt_lead abstain and person u-1 allow it with scope.
func (w *delegationWorld) delegate(t *testing.T, target, session, scope string) map[string]any {
	t.Helper()
	rec := w.a.submit(map[string]any{"capability": map[string]any{"action": "agents.delegate", "target": target},
		"arguments": map[string]any{"task": "fix the flaky test"}, "reason": "Fix the flaky test in CI.", "session": session})
	if str(rec["status"]) == "pending" {
		rec = w.lead.answer(rec, "abstain", "").want(t, "lead abstains on the delegation", http.StatusOK).body
		rec = w.p1.answer(rec, "allow", scope).want(t, "person allows the delegation", http.StatusOK).body
	}
	if str(rec["status"]) != "approved" {
		t.Fatalf("delegation: %s by %s, want approved", rec["status"], by(rec))
	}
	return rec
}

// wantRoute checks a pending request's chain and approver.
func wantRoute(t *testing.T, what string, rec map[string]any, chain, approver string) {
	t.Helper()
	if got := jsonString(rec["chain"]); got != chain {
		t.Errorf("%s: chain %s, want %s", what, got, chain)
	}
	if got := jsonString(rec["approver"]); got != approver {
		t.Errorf("%s: approver %s, want %s", what, got, approver)
	}
}

const (
	delegatedChain = `["agt_lead","agt_a","agt_b"]`
	ownChain       = `["agt_boss","agt_b"]`
	toA            = `{"id":"agt_a","kind":"agent"}`
	toLead         = `{"id":"agt_lead","kind":"agent"}`
	toBoss         = `{"id":"agt_boss","kind":"agent"}`
	toP1           = `{"id":"u-1","kind":"person"}`
)

// TestDelegatedWorkReachesDelegatorFirst (SPEC §3 "Delegated work"): after
// agt_a's approved agents.delegate:agt_b in session S, agt_b's request in
// S has chain agt_a's chain + agt_b and goes to agt_a first, then to
// agt_lead and person u-1; agt_b's own parent is never asked. Outside S
// nothing changes.
func TestDelegatedWorkReachesDelegatorFirst(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	w.delegate(t, "agt_b", "ses-S", "once")

	rec := w.b.pending("session", "ses-S")
	wantRoute(t, "agt_b in S", rec, delegatedChain, toA)
	rec = w.a.answer(rec, "allow", "", "reason", "looks right").want(t, "agt_a endorses", http.StatusOK).body
	wantRoute(t, "after agt_a's endorsement", rec, delegatedChain, toLead)
	rec = w.lead.answer(rec, "abstain", "").want(t, "agt_lead abstains", http.StatusOK).body
	wantRoute(t, "after agt_lead's abstention", rec, delegatedChain, toP1)
	w.boss.do("GET", "/v1/requests/"+str(rec["id"]), nil).wantProblem(t, "agt_b's own parent reads it", http.StatusNotFound, "RequestNotFound", "")
	rec = w.p1.answer(rec, "allow", "session").want(t, "person u-1 allows", http.StatusOK).body
	if str(rec["status"]) != "approved" || by(rec) != "person/u-1" {
		t.Fatalf("agt_b's request: %s by %s, want approved by person/u-1", rec["status"], by(rec))
	}
	// Grants follow the delegated chain: the requester and its endorser agt_a.
	for _, agent := range []string{"agt_b", "agt_a"} {
		if g := grantsOf(t, w.admin, "?agent="+agent); len(g) != 1 {
			t.Errorf("grants of %s: %d, want 1", agent, len(g))
		}
	}
	if items, _, _ := w.boss.list(""); len(items) != 0 {
		t.Errorf("agt_boss's inbox holds %v, want nothing", ids(items))
	}

	other := w.b.pending("session", "ses-other")
	wantRoute(t, "agt_b outside S", other, ownChain, toBoss)
	none := w.b.pending()
	wantRoute(t, "agt_b without a session", none, ownChain, toBoss)
	mine := w.a.pending("session", "ses-S", "tool", "build")
	wantRoute(t, "agt_a in S", mine, `["agt_lead","agt_a"]`, toLead)
}

// endPath is the DELETE path of agent's delegated work in session.
func endPath(agent, session string) string {
	return "/v1/agents/" + agent + "/delegations/" + url.PathEscape(session)
}

// TestDelegationEndsByCancel: only the delegator (or admin) ends it; then
// agt_b's next request in S follows its own chain, while one already
// pending keeps its chain. Ending it again is 404.
func TestDelegationEndsByCancel(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	const session = "ses/with spaces/and-slashes"
	w.delegate(t, "agt_b", session, "once")
	before := w.b.pending("session", session)
	wantRoute(t, "before the end", before, delegatedChain, toA)

	for name, c := range map[string]*client{"agt_b itself": w.b, "agt_b's parent": w.boss, "agt_a's parent": w.lead} {
		c.do("DELETE", endPath("agt_b", session), nil).wantProblem(t, name+" ends it", http.StatusNotFound, "NotFound", "")
	}
	w.p1.do("DELETE", endPath("agt_b", session), nil).wantProblem(t, "a person without requests:write", http.StatusForbidden, "Forbidden", "")
	w.a.do("DELETE", endPath("agt_b", "ses-other"), nil).wantProblem(t, "another session", http.StatusNotFound, "NotFound", "")
	if rec := w.b.pending("session", session); jsonString(rec["approver"]) != toA {
		t.Fatalf("a refused end ended it: approver %s", jsonString(rec["approver"]))
	}

	r := w.a.do("DELETE", endPath("agt_b", session), nil).want(t, "agt_a ends it", http.StatusOK)
	if r.body["ended_at"] == nil || str(r.body["delegator"]) != "agt_a" || str(r.body["session"]) != session {
		t.Errorf("ended delegation: %s", r.raw)
	}
	w.a.do("DELETE", endPath("agt_b", session), nil).wantProblem(t, "ending it again", http.StatusNotFound, "NotFound", "")

	after := w.b.pending("session", session)
	wantRoute(t, "after the end", after, ownChain, toBoss)
	wantRoute(t, "pending before the end", w.b.get(str(before["id"])), delegatedChain, toA)

	// A new approval starts it again; admin may end it.
	w.delegate(t, "agt_b", session, "once")
	wantRoute(t, "delegated again", w.b.pending("session", session), delegatedChain, toA)
	w.admin.do("DELETE", endPath("agt_b", session), nil).want(t, "admin ends it", http.StatusOK)
	wantRoute(t, "after admin's end", w.b.pending("session", session), ownChain, toBoss)
}

// TestDelegationByGrantAndRestart: an agents.delegate approved at submit by
// agt_a's lifetime grant starts delegated work at once, and delegated work
// survives a restart of the server.
func TestDelegationByGrantAndRestart(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	w.delegate(t, "agt_b", "ses-1", "lifetime")
	rec := w.delegate(t, "agt_b", "ses-2", "")
	if by(rec) == "person/u-1" {
		t.Fatalf("second delegation went to the person, want approved by agt_a's grant")
	}
	wantRoute(t, "agt_b in a session delegated by grant", w.b.pending("session", "ses-2"), delegatedChain, toA)

	w.srv.Restart(t)
	w.clients(t)
	wantRoute(t, "after restart", w.b.pending("session", "ses-1"), delegatedChain, toA)
	w.a.do("DELETE", endPath("agt_b", "ses-1"), nil).want(t, "end after restart", http.StatusOK)
	wantRoute(t, "ended after restart", w.b.pending("session", "ses-1"), ownChain, toBoss)
}

// TestDelegationBadInput: delegating to an unknown agent or to a retired
// one is 400 (field capability.target) and stores nothing;
// retiring the agent ends its delegated work.
func TestDelegationBadInput(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	subID, subTok := registerUnder(t, w.srv.URL, w.boss, w.p1)
	w.delegate(t, subID, "ses-S", "once")
	wantRoute(t, "registered subagent in S", newClient(t, w.srv.URL, subTok).pending("session", "ses-S"),
		`["agt_lead","agt_a","`+subID+`"]`, toA)

	w.p1.do("DELETE", "/v1/agents/"+subID, nil).want(t, "retire the subagent", http.StatusOK)
	w.a.do("DELETE", endPath(subID, "ses-S"), nil).wantProblem(t, "end after retirement", http.StatusNotFound, "NotFound", "")

	count := func() int {
		items, _, r := w.admin.list("?limit=500")
		r.want(t, "admin list", http.StatusOK)
		return len(items)
	}
	before := count()
	for name, target := range map[string]string{"an unknown agent": "agt_nobody", "a retired agent": subID} {
		w.a.do("POST", "/v1/requests", map[string]any{"capability": map[string]any{"action": "agents.delegate", "target": target},
			"arguments": map[string]any{}, "session": "ses-bad"}).
			wantProblem(t, "delegation to "+name, http.StatusBadRequest, "InvalidRequest", "capability.target")
	}
	if got := count(); got != before {
		t.Errorf("refused delegations stored requests: %d, want %d", got, before)
	}
}

// TestDelegatedReviewBrief: agt_a reviewing agt_b's request in delegated
// work is offered the brief it gave agt_b (its delegation's reason), not
// agt_b's own brief.
func TestDelegatedReviewBrief(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	js, err := w.srv.App.Broker.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	offers := make(chan *nats.Msg, 16)
	sub, err := js.Conn().ChanSubscribe("countersign.acme.review.agt_a", offers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	w.delegate(t, "agt_b", "ses-S", "once")
	rec := w.b.pending("session", "ses-S")
	for {
		select {
		case m := <-offers:
			var b domain.ReviewBundle
			if err := json.Unmarshal(m.Data, &b); err != nil {
				t.Fatalf("offer %s: %v", m.Data, err)
			}
			if string(b.Request.ID) != str(rec["id"]) {
				continue
			}
			if b.Decider.ID != "agt_a" || b.Decider.Brief != "Fix the flaky test in CI." {
				t.Fatalf("offer to %s with brief %q, want agt_a with the delegation's reason", b.Decider.ID, b.Decider.Brief)
			}
			return
		case <-time.After(30 * time.Second):
			t.Fatal("no review offer to agt_a")
		}
	}
}

// TestDelegationHealedByOutbox: an approval of agents.delegate stored
// without its delegation (its writer crashed between the two writes) gets
// it from the outbox, which derives it from the stored approval.
func TestDelegationHealedByOutbox(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	now := time.Now().UTC()
	exp := now.Add(5 * time.Minute)
	r := &domain.Request{ID: domain.NewRequestID(), Tenant: "acme", Agent: "agt_a", Session: "ses-crash",
		Capability: domain.Capability{Action: domain.ActionAgentsDelegate, Target: "agt_b"}, Arguments: []byte(`{}`),
		Subject: domain.Subject{Kind: domain.SubjectTool}, Reason: "After the crash.", Status: domain.StatusApproved,
		Chain: []domain.AgentID{"agt_lead", "agt_a"}, Endorsements: []domain.Endorsement{}, Timeout: "1h",
		CreatedAt: now, DeadlineAt: now.Add(time.Hour),
		Decision: &domain.Decision{Status: domain.StatusApproved, By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"},
			Scope: domain.ScopeOnce, DecidedAt: now, ExpiresAt: &exp}}
	if _, err := w.srv.App.Service.Store().CreateRequest(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() bool {
		d, ok := w.srv.App.Service.Views().Delegation("acme", "agt_b", "ses-crash")
		return ok && d.Active() && d.RequestID == r.ID
	}, "the outbox writes the delegation")
	wantRoute(t, "agt_b after the heal", w.b.pending("session", "ses-crash"), delegatedChain, toA)
}

// TestRetiredDelegatorsWorkEnds (SPEC §3): agt_lead's registered subagent
// hands ses-R to agt_b and is then retired; agt_b's next request in ses-R
// follows agt_b's own chain, never the retired delegator's.
func TestRetiredDelegatorsWorkEnds(t *testing.T) {
	t.Parallel()
	w := startDelegation(t)
	subID, subTok := registerUnder(t, w.srv.URL, w.lead, w.p1)
	sub := newClient(t, w.srv.URL, subTok)
	rec := delegateTo(sub, "agt_b", "ses-R")
	rec = w.lead.answer(rec, "abstain", "").want(t, "agt_lead abstains on the delegation", http.StatusOK).body
	rec = w.p1.answer(rec, "allow", "once").want(t, "u-1 allows the delegation", http.StatusOK).body
	if str(rec["status"]) != "approved" {
		t.Fatalf("delegation by %s: %s, want approved", subID, rec["status"])
	}
	wantRoute(t, "agt_b in ses-R", w.b.pending("session", "ses-R"), `["agt_lead","`+subID+`","agt_b"]`, `{"id":"`+subID+`","kind":"agent"}`)

	w.p1.do("DELETE", "/v1/agents/"+subID, nil).want(t, "retire the delegator", http.StatusOK)
	wantRoute(t, "agt_b in ses-R after its delegator retired", w.b.pending("session", "ses-R"), ownChain, toBoss)
}
