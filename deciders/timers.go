package deciders

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// TimeActions are what the timer worker does when time runs out. Both are
// idempotent and do nothing to a request that has moved on.
type TimeActions interface {
	// Expire ends a request still pending at or after its deadline.
	Expire(ctx context.Context, tenant events.TenantID, id events.RequestID) error
	// PassUp moves a request still waiting on agent approver at revision
	// rev to the decider above, as an abstention (review_timeout).
	PassUp(ctx context.Context, tenant events.TenantID, id events.RequestID, approver events.Ref, rev uint64) error
}

// DefaultReviewTimeout bounds an agent decider's review (SPEC §3).
const DefaultReviewTimeout = 2 * time.Minute

// Timers keeps one timer per pending request, set from the request
// mirror's changes (so it recovers every timer when the mirror replays at
// start, and never scans periodically), and acts when one fires.
type Timers struct {
	Views *kvstate.Views
	Act   TimeActions
	Log   *slog.Logger

	mu     sync.Mutex
	timers map[string]*time.Timer
	due    chan kvstate.Record
}

// Observe is the request mirror's OnChange hook.
func (t *Timers) Observe(key string, r kvstate.Record, deleted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timers == nil {
		t.timers = map[string]*time.Timer{}
		t.due = make(chan kvstate.Record, 1024)
	}
	if old := t.timers[key]; old != nil {
		old.Stop()
		delete(t.timers, key)
	}
	if deleted || r.Status != events.StatusPending {
		return
	}
	t.timers[key] = time.AfterFunc(time.Until(t.next(r)), func() { t.due <- r })
}

// next is when r must be looked at: its deadline, or sooner the end of the
// current agent decider's review.
func (t *Timers) next(r kvstate.Record) time.Time {
	at := r.DeadlineAt
	if due, ok := t.reviewDue(r); ok && due.Before(at) {
		at = due
	}
	return at
}

func (t *Timers) reviewDue(r kvstate.Record) (time.Time, bool) {
	if r.Approver == nil || r.Approver.Kind != events.KindAgent {
		return time.Time{}, false
	}
	a, ok := t.Views.Agent(r.Tenant, events.AgentID(r.Approver.ID))
	if !ok {
		return time.Time{}, false
	}
	d := a.ReviewTimeout
	if d <= 0 {
		d = DefaultReviewTimeout
	}
	since := r.Written
	if since.IsZero() {
		since = r.CreatedAt
	}
	return since.Add(d), true
}

// Run acts on due requests until ctx ends. A failed action is retried a
// second later (the record is re-read each time).
func (t *Timers) Run(ctx context.Context) error {
	t.mu.Lock()
	if t.due == nil {
		t.timers = map[string]*time.Timer{}
		t.due = make(chan kvstate.Record, 1024)
	}
	due := t.due
	t.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-due:
			if err := t.act(ctx, r); err != nil && ctx.Err() == nil {
				t.Log.Warn("timer action failed; retrying", "request", r.ID, "err", err)
				time.AfterFunc(time.Second, func() { due <- r })
			}
		}
	}
}

func (t *Timers) act(ctx context.Context, r kvstate.Record) error {
	if !time.Now().Before(r.DeadlineAt) {
		return t.Act.Expire(ctx, r.Tenant, r.ID)
	}
	return t.Act.PassUp(ctx, r.Tenant, r.ID, *r.Approver, r.Revision)
}
