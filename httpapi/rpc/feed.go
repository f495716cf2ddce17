package rpc

import (
	"errors"
	"sort"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// shown is what one connection has been sent of one request. It is kept
// per connection, not per subscription, so that however many of its
// subscriptions cover a request, each change is sent once.
type shown struct {
	rev   uint64         // the last revision sent
	open  bool           // shown (approval/requested or request) and not resolved
	judge bool           // judgeEscalated as it was opened; stage re-sends keep it
	asked *RequirementID // the requirement last sent as approval/request
}

// askStands reports whether the requirement last asked of the connection
// is still the one an answer decides: the same stage, at a revision an
// answer may still be made at (only other people's approvals since,
// SPEC §12).
func (st *shown) askStands(r *domain.Request) bool {
	return st.asked != nil && st.asked.SourceIndex == currentStage(r) && approvals.AnswerableAt(r, st.asked.Revision)
}

// onEvent turns one change into at most one notification on the
// connection. A change at or below the revision the connection was
// already sent for its request (by this subscription, another one, or a
// snapshot) is skipped, so nothing repeats; grant events and claims send
// nothing.
func (s *subscription) onEvent(ev approvals.Event) error {
	r, ok := recordOf(ev)
	if !ok || ev.Type == events.TypeRequestClaimed {
		return nil
	}
	c := s.c
	c.showMu.Lock()
	defer c.showMu.Unlock()
	st := c.shown[r.ID]
	if (st == nil || !st.open) && !s.inScope(r) {
		return nil
	}
	if st == nil {
		st = &shown{}
		c.shown[r.ID] = st
	} else if r.Revision <= st.rev {
		return nil
	}
	st.rev = r.Revision
	c.change(st, r, ev)
	return nil
}

// change sends what change ev of r means to the connection (showMu held).
func (c *conn) change(st *shown, r *domain.Request, ev approvals.Event) {
	switch {
	case r.Status.Terminal():
		wasOpen := st.open
		st.open = false
		c.forgetAsks(r)
		if wasOpen || r.Revision > 0 { // decided in its submit: never pending, nothing to close
			c.notify(NotifyResolved, resolvedParams(c.h.svc, r, ev.ID))
		}
	case !st.open:
		c.open(st, r, r.JudgeEscalated, ev.ID)
	case ev.Type == events.TypeRequestUpdated && len(r.Approvals) == 0: // the next stage: a re-send keeps judgeEscalated (an approval counted is an update)
		c.show(st, r, st.judge, ev.ID, NotifyRequested, false)
	default:
		c.show(st, r, st.judge, ev.ID, NotifyUpdated, false)
	}
}

// open shows a request the connection has no open showing of, and
// remembers the judgeEscalated it was shown with (showMu held).
func (c *conn) open(st *shown, r *domain.Request, judgeEscalated bool, cursor string) {
	st.open, st.judge = true, judgeEscalated
	c.show(st, r, judgeEscalated, cursor, NotifyRequested, true)
}

// show sends r's current state. To a connection that followed a session
// with session/resume, a requirement the caller may decide (it is offered
// choices) goes as the request approval/request, answered by the
// client's result, whenever it becomes the caller's to decide: first
// shown, a later stage, escalated or moved to them as a backup (seed
// 001). Asked once, it is not asked again while that ask stands (an
// approval by someone else of a group's request leaves it standing);
// fresh (a first showing or a re-send on session/resume) asks anew.
// Everything else goes as the notification method (showMu held).
func (c *conn) show(st *shown, r *domain.Request, judgeEscalated bool, cursor, method string, fresh bool) {
	p := requestParams(c.h.svc, c.caller, r, judgeEscalated, cursor)
	c.forgetAsks(r)
	if c.asking && len(p.AvailableChoices) > 0 && (fresh || !st.askStands(r)) && len(c.asks) < maxAsks {
		req := p.CurrentRequirementID
		st.asked = &req
		c.ask(p)
		return
	}
	c.notify(method, p)
}

// reissue sends a snapshot of pending requests, each as approval/requested
// (or approval/request), with judgeEscalated as given by judged: a
// session/resume re-sends with false, as SPEC §8 says. A record older
// than what the connection was already sent is skipped.
func (c *conn) reissue(recs []kvstate.Record, judged func(*domain.Request) bool) {
	c.showMu.Lock()
	defer c.showMu.Unlock()
	for i := range recs {
		r := &recs[i].Request
		st := c.shown[r.ID]
		if st == nil {
			st = &shown{}
			c.shown[r.ID] = st
		} else if r.Revision < st.rev {
			continue
		}
		st.rev = r.Revision
		c.open(st, r, judged(r), events.MsgID(r.ID, r.Revision))
	}
}

// recorded is the record's own judgeEscalated (a first showing).
func recorded(r *domain.Request) bool { return r.JudgeEscalated }

// resent is false: the request is re-issued.
func resent(*domain.Request) bool { return false }

// pendingIn returns the pending requests the caller may see: with
// sessions, those shown on these sessions (viewOf: a subagent's projected
// approvals on its parent's); without, the caller's inbox. Oldest write
// first.
func (c *conn) pendingIn(sessions map[string]bool) ([]kvstate.Record, error) {
	if sessions == nil {
		return c.h.svc.PendingIn(c.ctx, c.caller, nil)
	}
	var out []kvstate.Record
	for _, r := range c.h.svc.Views().Pending(c.caller.Tenant.ID) {
		if r.Status == domain.StatusPending && sessions[viewOf(c.h.svc, &r.Request).session] && c.h.svc.Visible(c.caller, &r.Request) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].KVRevision < out[j].KVRevision })
	full := out[:0]
	for _, r := range out {
		r, err := c.h.svc.Full(c.ctx, r) // the mirror may hold it without its arguments
		if errors.Is(err, approvals.ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		full = append(full, r)
	}
	return full, nil
}

// inScope reports whether r belongs to this subscription: a request shown
// on one of its sessions (viewOf), or one in the caller's inbox (waiting
// on the caller, or answered by the caller; admin: all).
func (s *subscription) inScope(r *domain.Request) bool {
	if s.sessions != nil {
		return s.sessions[viewOf(s.c.h.svc, r).session]
	}
	c := s.c.caller
	waiting := r.Status == domain.StatusPending && c.Tenant.MayAnswer(r, c.Principal)
	return c.Admin() || waiting || r.Answered(c.Principal)
}
