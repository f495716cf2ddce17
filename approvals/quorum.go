package approvals

import (
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// SPEC §12: at the top of a chain an approval policy may make a group the
// approver and ask for several distinct people. Each person's allow is
// kept in the record's approvals; the request is approved when they reach
// its quorum, with the smallest scope among them.

// toTop makes above r's approver. Above an agent's top stands its member;
// the first approval policy matching r's capability, in file order, puts
// its group there instead, with its quorum.
func toTop(t *domain.Tenant, r *domain.Request, above domain.Ref) {
	r.Approver = &above
	if above.Kind != domain.KindPerson || t == nil {
		return
	}
	if p := t.ApprovalPolicyFor(r.Capability); p != nil {
		r.Approver = &domain.Ref{Kind: domain.KindGroup, ID: string(p.Group)}
		r.RequiredApprovals = p.Approve
	}
}

// personAllow counts person c's allow of r (checked: c may answer and
// holds r's capability): it appends c's approval and, once the approvals
// reach r's quorum, allows r's current stage (or r) with the smallest
// scope among them. A stage allowed while others wait leaves the next
// stage its own quorum to reach.
func (s *Service) personAllow(c Caller, r *domain.Request, in AnswerInput, now time.Time) string {
	r.Approvals = append(r.Approvals, domain.Approval{By: c.Principal, At: now, Scope: in.Scope, Note: in.Reason})
	if len(r.Approvals) < r.Quorum() {
		return events.TypeRequestUpdated
	}
	in.Scope = r.Approvals.SmallestScope()
	if !r.AllowStage(c.Principal, in.Scope, now) { // a shell request's next stage waits (SPEC §8)
		r.Approvals = domain.Approvals{}
		return events.TypeRequestUpdated
	}
	s.finish(c.Tenant, r, domain.StatusApproved, c.Principal, in, now)
	return events.TypeRequestDecided
}

// notYours is the conflict of an answer by p, who r does not wait on.
func notYours(r *domain.Request, p domain.Ref) error {
	if r.Approvals.By(p) {
		return conflict("you allowed this request already; it waits on the others of %s", r.Approver.ID)
	}
	return conflict("another decider must answer this request")
}

// repeatedAllow reports whether person p's allow of r, with scope, is
// already counted (a safe repeat), and whether p has an allow counted at
// all.
func repeatedAllow(r *domain.Request, p domain.Ref, scope string) (same, counted bool) {
	for _, a := range r.Approvals {
		if a.By == p {
			return a.Scope == scope, true
		}
	}
	return false, false
}

// AnswerableAt reports whether an answer made while r was at revision
// rev may still apply to r (see expectedFits): the surfaces that carry a
// revision (links, /v1/rpc) hold it to the same rule as expected.
func AnswerableAt(r *domain.Request, rev uint64) bool { return expectedFits(r, rev) }

// Stale is the refusal of an answer made at revision expected that r no
// longer takes (!AnswerableAt): in the words every surface says it in
// (SPEC §12).
func Stale(r *domain.Request, expected uint64) error {
	return conflict("expected revision %d, request is at %d", expected, r.Revision)
}

// expectedFits reports whether an answer made at revision expected may
// apply to r: r is at expected, or r waits on a group and only approvals
// by others (one revision each) came since, so that two people allowing
// at once both count.
func expectedFits(r *domain.Request, expected uint64) bool {
	if expected == r.Revision {
		return true
	}
	return r.Approver != nil && r.Approver.Kind == domain.KindGroup &&
		expected < r.Revision && r.Revision-expected <= uint64(len(r.Approvals))
}
