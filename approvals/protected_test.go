package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
)

// A Service built without Watchers knows of no watched session: an answer
// to a protected write is refused (409, reason protected_write_unwatched)
// and the request stays pending (SPEC §8).
func TestProtectedWriteWithoutWatchersIsRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rec, _, err := f.svc.Submit(ctx, f.agent, approvals.SubmitInput{Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`),
		Session: "ses-1", Subject: &domain.Subject{Kind: domain.SubjectTool, ProtectedWrite: true}}, "", "")
	if err != nil || rec.Status != domain.StatusPending {
		t.Fatalf("submit: %v %+v", err, rec.Request)
	}
	zero := uint64(0)
	_, err = f.svc.Answer(ctx, f.person, rec.ID, approvals.AnswerInput{Expected: &zero, Decision: approvals.DecisionAllow})
	if !errors.Is(err, approvals.ErrConflict) || problem.From(err).Reason != approvals.ReasonUnwatched {
		t.Fatalf("answer of a protected write, no watchers: %v, want the unwatched conflict", err)
	}
	if got, err := f.svc.Get(ctx, f.person, rec.ID); err != nil || got.Status != domain.StatusPending || got.Revision != 0 {
		t.Errorf("after the refused answer: %v %s rev %d, want pending at 0", err, got.Status, got.Revision)
	}
}
