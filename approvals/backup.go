package approvals

import (
	"context"
	"slices"

	"github.com/countersign/countersign/deciders"
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
func (s *Service) MoveToBackup(ctx context.Context, tenant events.TenantID, id events.RequestID, approver events.Ref, rev uint64) error {
	_, err := s.transition(ctx, kvstate.Record{Request: events.Request{Tenant: tenant, ID: id}}, func(r *events.Request) (string, error) {
		now := s.now().UTC()
		if r.Status != events.StatusPending || r.Revision != rev || r.Approver == nil || *r.Approver != approver || !now.Before(r.DeadlineAt) {
			return "", errNothingToDo
		}
		to, _, ok := deciders.Backup(s.views, r)
		if !ok {
			return "", errNothingToDo
		}
		var passed []events.MemberID
		if r.Escalation != nil {
			passed = slices.Clone(r.Escalation.Passed)
		}
		r.Escalation = &events.Escalation{By: events.Ref{Kind: events.KindDeadline}, At: now, Passed: append(passed, events.MemberID(approver.ID))}
		r.Approver = &to
		return events.TypeRequestEscalated, nil
	})
	return ignoreNothing(err)
}

// coveredBy reports whether person p answers, or answered, r in another
// member's place (SPEC §12): r waits on p, p decided it, or r has moved
// away from p. Such a person sees r as its member does.
func coveredBy(r *events.Request, p events.Ref) bool {
	switch {
	case r.Approver != nil && *r.Approver == p, r.Decision != nil && r.Decision.By == p:
		return true
	}
	return r.Escalation != nil && slices.Contains(r.Escalation.Passed, events.MemberID(p.ID))
}
