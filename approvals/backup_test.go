package approvals_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// MoveToBackup moves a request only from the person and revision its
// timer saw, before the deadline: a timer that fires late, or twice (two
// processes), or after an answer changes nothing; each move bumps the
// revision once and says who was passed.
func TestMoveToBackupOnlyFromWhatTheTimerSaw(t *testing.T) {
	store, views, tenants := testutil.NewState(t, `tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, policy: {allow: ["*"]}, backup: u-2, answer_within: 10m}
      - {id: u-2, policy: {allow: ["*"]}, backup: u-3, answer_within: 10m}
      - {id: u-3, policy: {allow: ["*"]}, backup: u-4, answer_within: 10m}
      - {id: u-4, policy: {allow: ["*"]}}
    agents: [{id: agt_main, member: u-1}]
`)
	clk := testutil.NewClock(time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC))
	svc, err := approvals.New(approvals.Config{Store: store, Views: views, Checker: newChecker(views), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	agent := approvals.Caller{Tenant: tenants[0], Principal: domain.Ref{Kind: domain.KindAgent, ID: "agt_main"},
		Token: domain.Token{Scopes: []string{domain.ScopeRequestsWrite}}}
	ctx := context.Background()
	rec, _, err := svc.Submit(ctx, agent, approvals.SubmitInput{Tool: "deploy", Arguments: json.RawMessage(`{}`), Timeout: "30m"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	read := func() kvstate.Record {
		t.Helper()
		r, err := store.GetRequest(ctx, "acme", rec.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	u1, u2, u3 := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, domain.Ref{Kind: domain.KindPerson, ID: "u-2"}, domain.Ref{Kind: domain.KindPerson, ID: "u-3"}
	move := func(from domain.Ref, rev uint64) {
		t.Helper()
		if err := svc.MoveToBackup(ctx, "acme", rec.ID, from, rev); err != nil {
			t.Fatal(err)
		}
	}

	clk.Advance(10 * time.Minute)
	move(u1, 3) // a revision the request is not at
	move(u2, 0) // a person it does not wait on
	if r := read(); r.Revision != 0 || *r.Approver != u1 || r.Escalation != nil {
		t.Fatalf("a stale move changed the request: %+v", r.Request)
	}
	move(u1, 0)
	r := read()
	if r.Revision != 1 || *r.Approver != u2 || r.Escalation == nil || r.Escalation.By.Kind != domain.KindDeadline ||
		!r.Escalation.At.Equal(clk.Now()) || !slices.Equal(r.Escalation.Passed, []domain.MemberID{"u-1"}) {
		t.Fatalf("after the move: %+v escalation %+v", r.Request, r.Escalation)
	}
	move(u1, 0) // a second process's timer for the same move
	if r := read(); r.Revision != 1 || *r.Approver != u2 {
		t.Fatalf("the same move made twice: %+v", r.Request)
	}

	clk.Advance(10 * time.Minute)
	move(u2, 1)
	if r := read(); r.Revision != 2 || *r.Approver != u3 || !slices.Equal(r.Escalation.Passed, []domain.MemberID{"u-1", "u-2"}) {
		t.Fatalf("after the second move: %+v escalation %+v", r.Request, r.Escalation)
	}
	clk.Set(rec.DeadlineAt)
	move(u3, 2) // at the deadline, expiry's turn
	if r := read(); r.Revision != 2 || *r.Approver != u3 {
		t.Fatalf("moved at the deadline: %+v", r.Request)
	}
}
