package deciders

import (
	"context"
	"fmt"
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
	// RemoveRequest removes a terminal request past its tenant's
	// request_retention, if its stored revision is still kvRev (the
	// Sweeper's action).
	RemoveRequest(ctx context.Context, tenant events.TenantID, id events.RequestID, kvRev uint64) error
}

// DefaultReviewTimeout bounds an agent decider's review (SPEC §3).
const DefaultReviewTimeout = 2 * time.Minute

// Timers keeps one timer per request, set from the request
// mirror's changes (so it recovers every timer when the mirror replays at
// start, and never scans periodically), and acts when one fires.
// Its timers run on Clock and stop when Run returns.
type Timers struct {
	views *kvstate.Views
	acts  TimeActions
	log   *slog.Logger
	clock Clock

	mu      sync.Mutex
	timers  map[string]func() bool // each armed timer's stop
	due     chan job
	stopped bool
}

// job is what a fired timer asks Run to do: act on a pending request.
type job struct {
	id  events.RequestID
	run func(ctx context.Context) error
}

// TimersConfig wires Timers.
type TimersConfig struct {
	Views *kvstate.Views
	Act   TimeActions
	// Clock is the time timers run on. Default SystemClock.
	Clock Clock
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// NewTimers validates cfg and returns Timers. Errors: ErrConfig.
func NewTimers(cfg TimersConfig) (*Timers, error) {
	if cfg.Views == nil || cfg.Act == nil {
		return nil, fmt.Errorf("%w: timers need the views and their actions", ErrConfig)
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Timers{views: cfg.Views, acts: cfg.Act, log: cfg.Logger, clock: cfg.Clock,
		timers: map[string]func() bool{}, due: make(chan job, 1024)}, nil
}

// Observe is the request mirror's OnChange hook.
func (t *Timers) Observe(key string, r kvstate.Record, deleted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if stop := t.timers[key]; stop != nil {
		stop()
		delete(t.timers, key)
	}
	if deleted || t.stopped {
		return
	}
	if r.Status == events.StatusPending {
		t.arm(key, t.next(r), job{id: r.ID, run: func(ctx context.Context) error { return t.act(ctx, r) }})
	}
}

// arm sets key's timer to hand j to Run at at; t.mu held.
func (t *Timers) arm(key string, at time.Time, j job) {
	t.timers[key] = t.clock.AfterFunc(at.Sub(t.clock.Now()), func() { t.fire(j) })
}

// fire hands a due job to Run, unless Run has returned.
func (t *Timers) fire(r job) {
	t.mu.Lock()
	stopped, due := t.stopped, t.due
	t.mu.Unlock()
	if !stopped {
		due <- r
	}
}

// stop ends every timer; later Observes arm none.
func (t *Timers) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	for key, stop := range t.timers {
		stop()
		delete(t.timers, key)
	}
	for len(t.due) > 0 { // a fire blocked on a full channel gets through and finds stopped
		<-t.due
	}
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
	a, ok := t.views.Agent(r.Tenant, events.AgentID(r.Approver.ID))
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
	due := t.due
	defer t.stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case j := <-due:
			if err := j.run(ctx); err != nil && ctx.Err() == nil {
				t.log.Warn("timer action failed; retrying", "request", j.id, "err", err)
				t.clock.AfterFunc(time.Second, func() { t.fire(j) })
			}
		}
	}
}

func (t *Timers) act(ctx context.Context, r kvstate.Record) error {
	if !t.clock.Now().Before(r.DeadlineAt) {
		return t.acts.Expire(ctx, r.Tenant, r.ID)
	}
	return t.acts.PassUp(ctx, r.Tenant, r.ID, *r.Approver, r.Revision)
}
