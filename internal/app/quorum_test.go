package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// A refund needs two of finance (SPEC §12). u-1 is the agents' member and
// not in finance; u-4 is in finance but their policy does not allow
// refunds.
const quorumYAML = `tenants:
  - id: acme
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
      - {id: u-4, policy: {allow: ["tools.call:read_*"]}}
    groups:
      - {id: finance, members: [u-2, u-3, u-4]}
    approval_policies:
      - id: big-refunds
        match: ["tools.call:issue_refund"]
        approvers: {group: finance}
        approve: 2
    agents:
      - {id: agt_a, member: u-1}
      - {id: agt_sub, member: u-1, parent: agt_a}
    tokens:
      - {token: q-agent, principal: "agent:agt_a", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: q-sub, principal: "agent:agt_sub", scopes: [requests:write]}
      - {token: q-u1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: q-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: q-u3, principal: "person:u-3", scopes: [approvals:read, approvals:write]}
      - {token: q-u4, principal: "person:u-4", scopes: [approvals:read, approvals:write]}
`

// answerAs posts an answer and returns the status and the record (or
// the problem) it got.
func answerAs(t *testing.T, srv *servertest.Server, token, id string, expected uint64, decision, scope string) (int, domain.Request, map[string]any) {
	t.Helper()
	body := map[string]any{"expected": expected, "decision": decision, "scope": scope}
	code, data := srv.API(t).Do(http.MethodPost, "/v1/requests/"+id, token, body)
	var r domain.Request
	var problem map[string]any
	_ = json.Unmarshal(data, &r)
	_ = json.Unmarshal(data, &problem)
	return code, r, problem
}

func submitQuorumRefund(t *testing.T, srv *servertest.Server, token string, i int) domain.Request {
	t.Helper()
	body := refund(i)
	body["session"] = fmt.Sprint("s-", i)
	code, data := srv.API(t).Do(http.MethodPost, "/v1/requests", token, body)
	var r domain.Request
	if err := json.Unmarshal(data, &r); err != nil || code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, data)
	}
	return r
}

func inboxHas(t *testing.T, srv *servertest.Server, token string, id domain.RequestID) bool {
	for _, r := range srv.API(t).Pending(token) {
		if r.ID == id {
			return true
		}
	}
	return false
}

// watchEvents counts the CloudEvents of tenant acme by type and revision.
func watchEvents(t *testing.T, srv *servertest.Server) func(id domain.RequestID, typ string) int {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	sub, err := srv.App.Broker.Conn.Subscribe(events.SubjectRoot+".acme.events.>", func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		seen[m.Header.Get("ce-subject")+" "+m.Header.Get("ce-type")]++
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	_ = srv.App.Broker.Conn.Flush()
	return func(id domain.RequestID, typ string) int {
		mu.Lock()
		defer mu.Unlock()
		return seen[string(id)+" "+typ]
	}
}

// TestQuorumOverHTTP is issue 22's "Done when" over HTTP: a refund waits
// on finance, in every member's inbox; one allow leaves it pending with
// approvals of length 1, no grant and one request.updated; a repeat is a
// safe 200, the opposite answer 409; a member whose policy does not allow
// gets 403; the second person approves it with the smaller scope; a deny
// by one member ends another.
func TestQuorumOverHTTP(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(quorumYAML))
	count := watchEvents(t, srv)
	r := submitQuorumRefund(t, srv, "q-agent", 1)
	if r.Approver == nil || *r.Approver != (domain.Ref{Kind: domain.KindGroup, ID: "finance"}) || r.RequiredApprovals != 2 || r.Approvals == nil || len(r.Approvals) != 0 {
		t.Fatalf("created: approver %v, required %d, approvals %v", r.Approver, r.RequiredApprovals, r.Approvals)
	}
	for _, tok := range []string{"q-u2", "q-u3", "q-u4"} {
		if !inboxHas(t, srv, tok, r.ID) {
			t.Fatalf("%s's inbox lacks the group's request", tok)
		}
	}
	id := string(r.ID)
	if code, _, p := answerAs(t, srv, "q-u4", id, 0, "allow", "once"); code != http.StatusForbidden || p["error"] != "Forbidden" {
		t.Fatalf("u-4 (policy does not allow) allows: %d %v", code, p)
	}
	if code, _, _ := answerAs(t, srv, "q-u1", id, 0, "allow", "once"); code != http.StatusConflict {
		t.Fatalf("u-1 (not in finance) allows: %d, want 409", code)
	}
	code, one, _ := answerAs(t, srv, "q-u2", id, 0, "allow", "session")
	if code != http.StatusOK || one.Status != domain.StatusPending || len(one.Approvals) != 1 || one.Revision != 1 ||
		one.Approvals[0].By != (domain.Ref{Kind: domain.KindPerson, ID: "u-2"}) || one.Approvals[0].Scope != "session" {
		t.Fatalf("first allow: %d %+v", code, one)
	}
	if code, again, _ := answerAs(t, srv, "q-u2", id, 0, "allow", "session"); code != http.StatusOK || again.Revision != 1 {
		t.Fatalf("safe repeat: %d at revision %d", code, again.Revision)
	}
	for _, c := range []struct{ decision, scope string }{{"deny", "once"}, {"allow", "lifetime"}} {
		if code, _, _ := answerAs(t, srv, "q-u2", id, 1, c.decision, c.scope); code != http.StatusConflict {
			t.Fatalf("u-2 answers %s %s after allowing: %d, want 409", c.decision, c.scope, code)
		}
	}
	if n := grantsOf(t, srv); n != 0 {
		t.Fatalf("an allow that is not enough left %d grants", n)
	}
	if !inboxHas(t, srv, "q-u2", r.ID) || !inboxHas(t, srv, "q-u3", r.ID) {
		t.Fatal("after u-2's allow, the request must stay in u-2's inbox (answered) and u-3's (waiting)")
	}
	// u-3 answers the revision it saw (0): only u-2's approval came since.
	// The approval takes the smaller scope of the two (u-2's session).
	code, done, _ := answerAs(t, srv, "q-u3", id, 0, "allow", "lifetime")
	if code != http.StatusOK || done.Status != domain.StatusApproved || len(done.Approvals) != 2 || done.Revision != 2 || done.Decision.Scope != "session" ||
		done.Decision.By != (domain.Ref{Kind: domain.KindPerson, ID: "u-3"}) {
		t.Fatalf("second allow: %d %+v %+v", code, done, done.Decision)
	}
	if code, again, _ := answerAs(t, srv, "q-u2", id, 1, "allow", "session"); code != http.StatusOK || again.Revision != 2 {
		t.Fatalf("u-2's repeat after the approval: %d at revision %d", code, again.Revision)
	}
	if n := grantsOf(t, srv); n != 1 {
		t.Fatalf("the approval (session) left %d grants, want 1", n)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return count(r.ID, events.TypeRequestUpdated) == 1 && count(r.ID, events.TypeRequestDecided) == 1
	}, "one request.updated and one request.decided")

	d := submitQuorumRefund(t, srv, "q-agent", 2)
	if code, _, p := answerAs(t, srv, "q-u3", string(d.ID), 0, "allow", "once"); code != http.StatusOK {
		t.Fatalf("allow: %d %v (%s)", code, p, d.ID)
	}
	code, denied, _ := answerAs(t, srv, "q-u4", string(d.ID), 1, "deny", "once")
	if code != http.StatusOK || denied.Status != domain.StatusDenied || denied.Decision.By.ID != "u-4" || len(denied.Approvals) != 1 {
		t.Fatalf("deny by a member: %d %+v", code, denied)
	}
}

func grantsOf(t *testing.T, srv *servertest.Server) int {
	t.Helper()
	code, data := srv.API(t).Do(http.MethodGet, "/v1/grants", "q-u1", nil)
	var page struct{ Items []any }
	if code != http.StatusOK || json.Unmarshal(data, &page) != nil {
		t.Fatalf("grants: %d %s", code, data)
	}
	return len(page.Items)
}

// TestQuorumOverTheBus: the same rules through api.answer with each
// person's own token on the bus.
func TestQuorumOverTheBus(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(quorumYAML))
	r := submitQuorumRefund(t, srv, "q-agent", 1)
	answer := func(token, person string, expected uint64, decision string) (string, domain.Request, *nats.Msg) {
		t.Helper()
		c := mustDial(t, srv, token, acme, domain.Ref{Kind: domain.KindPerson, ID: person})
		m := nats.NewMsg(events.APISubject(acme, events.OpAnswer))
		m.Header.Set("Authorization", "Bearer "+token)
		m.Data, _ = json.Marshal(map[string]any{"id": r.ID, "expected": expected, "decision": decision})
		reply, err := c.nc.RequestMsg(m, 10*time.Second)
		if err != nil {
			t.Fatalf("answer over the bus: %v", err)
		}
		var got domain.Request
		_ = json.Unmarshal(reply.Data, &got)
		status := reply.Header.Get("Status")
		if status == "" {
			status = reply.Header.Get("Nats-Service-Error-Code")
		}
		return status, got, reply
	}
	if status, _, m := answer("q-u4", "u-4", 0, "allow"); status != "403" || m.Header.Get("Nats-Service-Error") != "Forbidden" {
		t.Fatalf("u-4 allows on the bus: %s %s", status, m.Data)
	}
	if status, one, _ := answer("q-u2", "u-2", 0, "allow"); status != "200" || one.Status != domain.StatusPending || len(one.Approvals) != 1 {
		t.Fatalf("first allow on the bus: %s %+v", status, one)
	}
	if status, _, _ := answer("q-u2", "u-2", 1, "deny"); status != "409" {
		t.Fatalf("u-2's opposite answer on the bus: %s", status)
	}
	if status, done, _ := answer("q-u3", "u-3", 1, "allow"); status != "200" || done.Status != domain.StatusApproved || len(done.Approvals) != 2 {
		t.Fatalf("second allow on the bus: %s %+v", status, done)
	}
}

// TestQuorumSameInstant: two people allow each request at the same
// instant, with the same expected revision: both answers count (neither
// is lost), exactly one of them reaches the quorum, and each request
// emits one request.updated and one request.decided.
func TestQuorumSameInstant(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(quorumYAML))
	count := watchEvents(t, srv)
	const n = 20
	for i := range n {
		r := submitQuorumRefund(t, srv, "q-agent", i)
		start := make(chan struct{})
		var wg sync.WaitGroup
		got := make([]domain.Request, 2)
		codes := make([]int, 2)
		for j, tok := range []string{"q-u2", "q-u3"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				codes[j], got[j], _ = answerAs(t, srv, tok, string(r.ID), 0, "allow", "once")
			}()
		}
		close(start)
		wg.Wait()
		if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
			t.Fatalf("request %d: answers %v, want both 200", i, codes)
		}
		approved := 0
		for _, g := range got {
			if g.Status == domain.StatusApproved {
				approved++
			}
		}
		final := srv.API(t).Get("q-u2", r.ID)
		if approved != 1 || final.Status != domain.StatusApproved || len(final.Approvals) != 2 || final.Approvals[0].By == final.Approvals[1].By {
			t.Fatalf("request %d: %d answers saw the approval; final %s with approvals %+v", i, approved, final.Status, final.Approvals)
		}
		testutil.Eventually(t, 10*time.Second, func() bool {
			return count(r.ID, events.TypeRequestUpdated) == 1 && count(r.ID, events.TypeRequestDecided) == 1
		}, fmt.Sprintf("request %d: one updated and one decided", i))
	}
}

// TestQuorumThroughTheChain: a request of a subagent reaches finance when
// its parent agent passes it up (the top of the chain), not before.
func TestQuorumThroughTheChain(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(quorumYAML))
	r := submitQuorumRefund(t, srv, "q-sub", 1)
	if r.Approver == nil || *r.Approver != (domain.Ref{Kind: domain.KindAgent, ID: "agt_a"}) || r.RequiredApprovals != 1 {
		t.Fatalf("created: approver %v, required %d", r.Approver, r.RequiredApprovals)
	}
	code, up, _ := answerAs(t, srv, "q-agent", string(r.ID), 0, "abstain", "once")
	if code != http.StatusOK || up.Approver == nil || *up.Approver != (domain.Ref{Kind: domain.KindGroup, ID: "finance"}) || up.RequiredApprovals != 2 {
		t.Fatalf("passed up: %d approver %v required %d", code, up.Approver, up.RequiredApprovals)
	}
	if !inboxHas(t, srv, "q-u3", r.ID) {
		t.Fatal("the passed-up request is not in u-3's inbox")
	}
}

// TestQuorumSurvivesKill: a server killed (SIGKILL) between the first and
// the second approval keeps the first; after the restart the second
// approves the request.
func TestQuorumSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	bin, dir, addr := buildBinary(t), t.TempDir(), freeAddr(t)
	cmd := serveProcess(t, bin, dir, addr, quorumYAML)
	srv := &servertest.Server{URL: "http://" + addr}
	r := submitQuorumRefund(t, srv, "q-agent", 1)
	if code, one, _ := answerAs(t, srv, "q-u2", string(r.ID), 0, "allow", "once"); code != http.StatusOK || len(one.Approvals) != 1 {
		t.Fatalf("first allow: %d %+v", code, one)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	serveProcess(t, bin, dir, addr, quorumYAML)
	kept := srv.API(t).Get("q-u3", r.ID)
	if kept.Status != domain.StatusPending || len(kept.Approvals) != 1 || kept.Approvals[0].By.ID != "u-2" {
		t.Fatalf("after kill -9: %s with approvals %+v", kept.Status, kept.Approvals)
	}
	if code, done, _ := answerAs(t, srv, "q-u3", string(r.ID), 1, "allow", "once"); code != http.StatusOK || done.Status != domain.StatusApproved {
		t.Fatalf("second allow after the restart: %d %+v", code, done)
	}
}
