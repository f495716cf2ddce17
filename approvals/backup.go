package approvals

import (
	"context"
	"slices"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// MoveToBackup moves a request still waiting on person approver at
// revision rev, before its deadline, to their backup (SPEC §12: they did
// not answer within their answer_within): approver changes, the revision
// bumps and request.escalated is emitted, the escalation saying it was
// the deadline and whom the request has passed. One compare-and-set: an
// answer written first leaves nothing to do, and an answer after it finds
// another decider (409).
func (s *Service) MoveToBackup(ctx context.Context, tenant domain.TenantID, id domain.RequestID, approver domain.Ref, rev uint64) error {
	_, err := s.transition(ctx, kvstate.Record{Request: domain.Request{Tenant: tenant, ID: id}}, func(r *domain.Request) (string, error) {
		now := s.now().UTC()
		if r.Status != domain.StatusPending || r.Revision != rev || r.Approver == nil || *r.Approver != approver || !now.Before(r.DeadlineAt) {
			return "", errNothingToDo
		}
		to, _, ok := deciders.Backup(s.views, r)
		if !ok {
			return "", errNothingToDo
		}
		var passed []domain.MemberID
		if r.Escalation != nil {
			passed = slices.Clone(r.Escalation.Passed)
		}
		r.Escalation = &domain.Escalation{By: domain.Ref{Kind: domain.KindDeadline}, At: now, Passed: append(passed, domain.MemberID(approver.ID))}
		r.Approver = &to
		return events.TypeRequestEscalated, nil
	})
	return ignoreNothing(err)
}

// coveredBy reports whether person p answers, or answered, r in another
// member's place (SPEC §12): r waits on p, p decided it, or r has moved
// away from p. Such a person sees r as its member does.
func coveredBy(r *domain.Request, p domain.Ref) bool {
	switch {
	case r.Approver != nil && *r.Approver == p, r.Decision != nil && r.Decision.By == p:
		return true
	}
	return r.Escalation != nil && slices.Contains(r.Escalation.Passed, domain.MemberID(p.ID))
}
