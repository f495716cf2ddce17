package approvals_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
)

// AnswerableAt (expectedFits): an answer made at revision expected applies
// to a request at that revision; to a group's request also when only
// others' approvals (one revision each) came since; never to a revision
// the request has not reached, nor past what the approvals account for.
func TestAnswerableAt(t *testing.T) {
	group := &domain.Ref{Kind: domain.KindGroup, ID: "finance"}
	person := &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	two := domain.Approvals{{By: domain.Ref{Kind: domain.KindPerson, ID: "u-2"}}, {By: domain.Ref{Kind: domain.KindPerson, ID: "u-3"}}}
	for _, tc := range []struct {
		name     string
		approver *domain.Ref
		rev      uint64
		approved domain.Approvals
		expected uint64
		want     bool
	}{
		{"at its revision", person, 3, nil, 3, true},
		{"behind, one approver", person, 3, nil, 2, false},
		{"a person behind, with approvals", person, 2, two, 1, false},
		{"ahead", person, 3, nil, 4, false},
		{"no approver, at its revision", nil, 0, nil, 0, true},
		{"no approver, behind with approvals", nil, 2, two, 1, false},
		{"a group at its revision", group, 2, two, 2, true},
		{"a group, one approval since", group, 2, two, 1, true},
		{"a group, two approvals since", group, 2, two, 0, true},
		{"a group, more revisions than approvals", group, 3, two, 0, false},
		{"a group ahead", group, 2, two, 3, false},
		{"a group, no approvals, behind", group, 1, nil, 0, false},
	} {
		r := &domain.Request{Approver: tc.approver, Revision: tc.rev, Approvals: tc.approved}
		if got := approvals.AnswerableAt(r, tc.expected); got != tc.want {
			t.Errorf("%s: AnswerableAt(rev %d, expected %d) = %v, want %v", tc.name, tc.rev, tc.expected, got, tc.want)
		}
	}
}

// Stale is a 409 that names both revisions, in the words every surface
// uses.
func TestStale(t *testing.T) {
	err := approvals.Stale(&domain.Request{Revision: 5}, 3)
	var p *problem.Error
	if !errors.Is(err, approvals.ErrConflict) || !errors.As(err, &p) || p.Status != http.StatusConflict {
		t.Fatalf("Stale = %#v, want a 409 ErrConflict", err)
	}
	if want := "expected revision 3, request is at 5"; !strings.Contains(p.Detail, want) {
		t.Errorf("Stale's detail %q does not say %q", p.Detail, want)
	}
}

func rev(n uint64) *uint64 { return &n }

// Answer rule 1: a malformed answer is refused by field, before the
// record is read, and changes nothing.
func TestAnswerRefusesAMalformedAnswer(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rec := f.submit(t, "")
	for _, tc := range []struct {
		name  string
		c     approvals.Caller
		in    approvals.AnswerInput
		field string
	}{
		{"no expected", f.person, approvals.AnswerInput{Decision: approvals.DecisionAllow}, "expected"},
		{"no decision", f.person, approvals.AnswerInput{Expected: rev(0)}, "decision"},
		{"an unknown decision", f.person, approvals.AnswerInput{Expected: rev(0), Decision: "approve"}, "decision"},
		{"an unknown scope", f.person, approvals.AnswerInput{Expected: rev(0), Decision: approvals.DecisionAllow, Scope: "forever"}, "scope"},
		{"a person abstains", f.person, approvals.AnswerInput{Expected: rev(0), Decision: approvals.DecisionAbstain}, "decision"},
	} {
		_, err := f.svc.Answer(ctx, tc.c, rec.ID, tc.in)
		var p *problem.Error
		if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Field != tc.field {
			t.Errorf("%s: %v, want a 400 about %q", tc.name, err, tc.field)
		}
	}
	if got, err := f.svc.Get(ctx, f.person, rec.ID); err != nil || got.Status != domain.StatusPending || got.Revision != rec.Revision {
		t.Errorf("after refused answers: %v %s rev %d, want pending at %d", err, got.Status, got.Revision, rec.Revision)
	}
}

// Answer rules 2 and 3 on one request: a stale expected is a 409 that
// changes nothing; the answer at the current revision decides; the same
// answer again (at the old revision too) is a safe repeat that returns
// the record unchanged; the opposite answer, or the same decision at
// another scope, is a 409; no one but the approver may answer.
func TestAnswerRepeatAndConflict(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rec := f.submit(t, "")

	_, err := f.svc.Answer(ctx, f.person, rec.ID, approvals.AnswerInput{Expected: rev(rec.Revision + 1), Decision: approvals.DecisionAllow})
	if !errors.Is(err, approvals.ErrConflict) || !strings.Contains(err.Error(), "expected revision") {
		t.Fatalf("answer at a revision not reached: %v, want a stale 409", err)
	}
	if got, _ := f.svc.Get(ctx, f.person, rec.ID); got.Status != domain.StatusPending || got.Revision != rec.Revision {
		t.Fatalf("a stale answer changed the request: %s rev %d", got.Status, got.Revision)
	}

	deny := approvals.AnswerInput{Expected: rev(rec.Revision), Decision: approvals.DecisionDeny, Reason: "not today"}
	decided, err := f.svc.Answer(ctx, f.person, rec.ID, deny)
	if err != nil || decided.Status != domain.StatusDenied {
		t.Fatalf("deny: %v %s", err, decided.Status)
	}
	again, err := f.svc.Answer(ctx, f.person, rec.ID, deny)
	if err != nil {
		t.Fatalf("the same deny again: %v, want a safe repeat", err)
	}
	if again.Revision != decided.Revision || again.Status != domain.StatusDenied {
		t.Errorf("the repeat wrote: rev %d -> %d, %s", decided.Revision, again.Revision, again.Status)
	}

	for _, tc := range []struct {
		name string
		c    approvals.Caller
		in   approvals.AnswerInput
	}{
		{"the opposite answer", f.person, approvals.AnswerInput{Expected: rev(rec.Revision), Decision: approvals.DecisionAllow}},
		{"the opposite answer at the new revision", f.person, approvals.AnswerInput{Expected: rev(decided.Revision), Decision: approvals.DecisionAllow}},
		{"the same decision at another scope", f.person, approvals.AnswerInput{Expected: rev(rec.Revision), Decision: approvals.DecisionDeny, Scope: domain.ScopeSession}},
	} {
		_, err := f.svc.Answer(ctx, tc.c, rec.ID, tc.in)
		var p *problem.Error
		if !errors.Is(err, approvals.ErrConflict) || !errors.As(err, &p) || p.Status != http.StatusConflict {
			t.Errorf("%s: %v, want 409", tc.name, err)
		}
	}
	if got, _ := f.svc.Get(ctx, f.person, rec.ID); got.Status != domain.StatusDenied || got.Revision != decided.Revision {
		t.Errorf("refused answers changed the request: %s rev %d", got.Status, got.Revision)
	}
}

// A person with no part in a request may not answer it, nor learn that it
// exists: a 404 that changes nothing.
func TestAnswerByAnotherIsRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rec := f.submit(t, "")
	other := f.person
	other.Principal = domain.Ref{Kind: domain.KindPerson, ID: "u-9"}
	other.Token.Principal = other.Principal
	_, err := f.svc.Answer(ctx, other, rec.ID, approvals.AnswerInput{Expected: rev(rec.Revision), Decision: approvals.DecisionAllow})
	if !errors.Is(err, approvals.ErrNotFound) {
		t.Fatalf("an answer by someone with no part in the request: %v, want ErrNotFound", err)
	}
	if got, _ := f.svc.Get(ctx, f.person, rec.ID); got.Status != domain.StatusPending || got.Revision != rec.Revision {
		t.Errorf("a refused answer changed the request: %s rev %d", got.Status, got.Revision)
	}
}
