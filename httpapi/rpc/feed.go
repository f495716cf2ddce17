package rpc

import (
	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

// onEvent turns one change into at most one notification. A change at or
// below the revision already sent for its request (the snapshot and the
// feed overlap) is skipped, so nothing repeats; grant events and claims
// send nothing.
func (s *subscription) onEvent(ev approvals.Event) error {
	r, ok := recordOf(ev)
	if !ok || ev.Type == events.TypeRequestClaimed {
		return nil
	}
	_, opened := s.opened[r.ID]
	if !opened && !s.inScope(r) {
		return nil
	}
	if last, ok := s.sent[r.ID]; ok && r.Revision <= last {
		return nil
	}
	s.sent[r.ID] = r.Revision
	s.notify(r, ev, opened)
	return nil
}

// notify sends what change ev of r means to this subscription.
func (s *subscription) notify(r *events.Request, ev approvals.Event, opened bool) {
	switch {
	case r.Status.Terminal():
		delete(s.opened, r.ID)
		delete(s.sent, r.ID)
		if opened || r.Revision > 0 { // decided in its submit: never pending, nothing to close
			s.c.notify(NotifyResolved, resolvedParams(r, ev.ID))
		}
	case !opened:
		s.open(r, r.JudgeEscalated, ev.ID)
	case ev.Type == events.TypeRequestUpdated && len(r.Approvals) == 0: // the next stage: a re-send keeps judgeEscalated (an approval counted is an update)
		s.c.notify(NotifyRequested, requestParams(s.c.h.svc, s.c.caller, r, s.opened[r.ID], ev.ID))
	default:
		s.c.notify(NotifyUpdated, requestParams(s.c.h.svc, s.c.caller, r, s.opened[r.ID], ev.ID))
	}
}

// open sends approval/requested for a request this subscription has not
// shown yet, and remembers the judgeEscalated it was shown with.
func (s *subscription) open(r *events.Request, judgeEscalated bool, cursor string) {
	s.opened[r.ID] = judgeEscalated
	s.c.notify(NotifyRequested, requestParams(s.c.h.svc, s.c.caller, r, judgeEscalated, cursor))
}

// inScope reports whether r belongs to this subscription: a request of
// one of its sessions, or one in the caller's inbox (waiting on the
// caller, or answered by the caller; admin: all).
func (s *subscription) inScope(r *events.Request) bool {
	if s.sessions != nil {
		return s.sessions[r.Session]
	}
	c := s.c.caller
	waiting := r.Status == events.StatusPending && c.Tenant.MayAnswer(r, c.Principal)
	return c.Admin() || waiting || r.Answered(c.Principal)
}
