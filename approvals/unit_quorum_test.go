package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

const quorumYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
    groups: [{id: finance, members: [u-1, u-2, u-3]}]
    approval_policies:
      - {id: refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, approve: 2}
    agents: [{id: agt_a, member: u-1}]
`

// A group's request takes an allow made at the revision its answerer saw
// while only others' allows came since (two people allowing at once both
// count); a person's second allow at another scope is a 409 that says so;
// the same allow again is a safe repeat; once the quorum is met, a third
// answer is a 409.
func TestGroupAnswersAtOnceBothCount(t *testing.T) {
	store, views, tenants := testutil.NewState(t, quorumYAML)
	clk := testutil.NewClock(time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC))
	svc, err := approvals.New(approvals.Config{Store: store, Views: views, Checker: newChecker(views), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	caller := func(kind, id string, scopes ...string) approvals.Caller {
		p := domain.Ref{Kind: kind, ID: id}
		return approvals.Caller{Tenant: tenants[0], Principal: p, Token: domain.Token{Principal: p, Scopes: scopes}}
	}
	person := func(id string) approvals.Caller {
		return caller(domain.KindPerson, id, domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite)
	}
	rec, _, err := svc.Submit(ctx, caller(domain.KindAgent, "agt_a", domain.ScopeRequestsWrite),
		approvals.SubmitInput{Tool: "issue_refund", Arguments: json.RawMessage(`{"amount":120}`)}, "", "")
	if err != nil || rec.Status != domain.StatusPending || rec.Approver == nil || rec.Approver.Kind != domain.KindGroup {
		t.Fatalf("submit: %v %s %+v", err, rec.Status, rec.Approver)
	}
	seen := rec.Revision
	allow := approvals.AnswerInput{Expected: &seen, Decision: approvals.DecisionAllow}

	first, err := svc.Answer(ctx, person("u-1"), rec.ID, allow)
	if err != nil || first.Status != domain.StatusPending || len(first.Approvals) != 1 {
		t.Fatalf("u-1's allow: %v %s, %d approvals", err, first.Status, len(first.Approvals))
	}
	again, err := svc.Answer(ctx, person("u-1"), rec.ID, allow)
	if err != nil || again.Revision != first.Revision {
		t.Errorf("u-1's allow again: %v, rev %d -> %d, want a safe repeat", err, first.Revision, again.Revision)
	}
	session := approvals.AnswerInput{Expected: &seen, Decision: approvals.DecisionAllow, Scope: domain.ScopeSession}
	if _, err := svc.Answer(ctx, person("u-1"), rec.ID, session); !errors.Is(err, approvals.ErrConflict) || !strings.Contains(err.Error(), "you allowed this request already") {
		t.Errorf("u-1's allow at another scope: %v, want the 409 that says it waits on the others", err)
	}

	second, err := svc.Answer(ctx, person("u-2"), rec.ID, allow) // made at the revision before u-1's allow
	if err != nil || second.Status != domain.StatusApproved || len(second.Approvals) != 2 {
		t.Fatalf("u-2's allow at the revision it saw: %v %s, %d approvals; want approved by both", err, second.Status, len(second.Approvals))
	}
	if _, err := svc.Answer(ctx, person("u-3"), rec.ID, allow); !errors.Is(err, approvals.ErrConflict) {
		t.Errorf("u-3's allow after the quorum: %v, want 409", err)
	}
	if got, _ := svc.Get(ctx, person("u-1"), rec.ID); got.Revision != second.Revision || got.Status != domain.StatusApproved {
		t.Errorf("refused answers changed the request: %s rev %d", got.Status, got.Revision)
	}
}
