package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// An answer reads the request from the process's mirror, which may lag
// the store (another process changed it a moment ago). The lag must never
// decide: a refusal based on the lagging copy is checked against the
// stored record, and a write based on it loses its compare-and-set.
func TestAnswerFromALaggingMirror(t *testing.T) {
	store, live, tenants := testutil.NewState(t, config.DemoYAML)
	clk := testutil.NewClock(time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC))
	// Process A keeps its mirror current; process B's mirror never
	// follows the store: it holds only what the test puts in it.
	a, err := approvals.New(approvals.Config{Store: store, Views: live, Checker: newChecker(live), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	lagging, err := views.New(views.Config{Store: store, Tenants: tenants})
	if err != nil {
		t.Fatal(err)
	}
	b, err := approvals.New(approvals.Config{Store: store, Views: lagging, Checker: newChecker(lagging), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	caller := func(kind, id string, scopes ...string) approvals.Caller {
		p := domain.Ref{Kind: kind, ID: id}
		return approvals.Caller{Tenant: tenants[0], Principal: p, Token: domain.Token{Principal: p, Scopes: scopes}}
	}
	programmer := caller(domain.KindAgent, "agt_programmer", domain.ScopeRequestsWrite)
	main := caller(domain.KindAgent, "agt_main", domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite)
	person := caller(domain.KindPerson, "u-1", domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite)
	ctx := context.Background()
	answer := func(decision string, expected uint64) approvals.AnswerInput {
		return approvals.AnswerInput{Expected: &expected, Decision: decision}
	}

	// submit returns a request that agt_main has endorsed up to the person
	// (revision 1), while B's mirror still holds revision 0, waiting on
	// agt_main.
	submit := func() kvstate.Record {
		t.Helper()
		rec, _, err := a.Submit(ctx, programmer, approvals.SubmitInput{Tool: "deploy",
			Arguments: json.RawMessage(`{"env":"prod"}`)}, "", "")
		if err != nil || rec.Status != domain.StatusPending || rec.Approver.ID != "agt_main" {
			t.Fatalf("submit: %v %+v", err, rec.Request)
		}
		lagging.Requests().Apply(kvstate.RequestKey(rec.Tenant, rec.ID), rec, rec.KVRevision)
		up, err := a.Answer(ctx, main, rec.ID, answer(approvals.DecisionAllow, 0))
		if err != nil || up.Status != domain.StatusPending || up.Approver.Kind != domain.KindPerson || up.Revision != 1 {
			t.Fatalf("endorse: %v %+v", err, up.Request)
		}
		return up
	}

	// B's copy says the approver is agt_main at revision 0; the store says
	// the person at revision 1. The person's answer is right, and goes
	// through.
	rec := submit()
	got, err := b.Answer(ctx, person, rec.ID, answer(approvals.DecisionAllow, 1))
	if err != nil || got.Status != domain.StatusApproved {
		t.Fatalf("answer against a lagging copy: %v %+v, want approved", err, got.Request)
	}

	// The request was denied through A; B's copy still shows it pending.
	// B's answer is refused, and the stored decision stands.
	rec = submit()
	if _, err := a.Answer(ctx, person, rec.ID, answer(approvals.DecisionDeny, 1)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Answer(ctx, person, rec.ID, answer(approvals.DecisionAllow, 1)); !errors.Is(err, approvals.ErrConflict) {
		t.Fatalf("answer of a denied request from a lagging copy: %v %+v, want ErrConflict", err, got.Request)
	}
	stored, err := store.GetRequest(ctx, rec.Tenant, rec.ID)
	if err != nil || stored.Status != domain.StatusDenied {
		t.Fatalf("stored: %v %s, want denied", err, stored.Status)
	}

	// The same, with B's copy as fresh as it can be just before the deny:
	// its answer passes every check on the copy and loses the
	// compare-and-set.
	rec = submit()
	lagging.Requests().Apply(kvstate.RequestKey(rec.Tenant, rec.ID), rec, rec.KVRevision)
	if _, err := a.Answer(ctx, person, rec.ID, answer(approvals.DecisionDeny, 1)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Answer(ctx, person, rec.ID, answer(approvals.DecisionAllow, 1)); !errors.Is(err, approvals.ErrConflict) {
		t.Fatalf("answer from a copy one write behind: %v %+v, want ErrConflict", err, got.Request)
	}
}
