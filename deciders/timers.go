package deciders

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// TimeActions are what the timer worker does when time runs out. Each is
// idempotent and do nothing to a request that has moved on.
type TimeActions interface {
	// Expire ends a request still pending at or after its deadline.
	Expire(ctx context.Context, tenant events.TenantID, id events.RequestID) error
	// PassUp moves a request still waiting on agent approver at revision
	// rev to the decider above, as an abstention (review_timeout).
	PassUp(ctx context.Context, tenant events.TenantID, id events.RequestID, approver events.Ref, rev uint64) error
	// MoveToBackup moves a request still waiting on person approver at
	// revision rev to their backup (answer_within, SPEC §12).
	MoveToBackup(ctx context.Context, tenant events.TenantID, id events.RequestID, approver events.Ref, rev uint64) error
	// RemoveRequest removes a terminal request past its tenant's
	// request_retention, if its stored revision is still kvRev (the
	// Sweeper's action).
	RemoveRequest(ctx context.Context, tenant events.TenantID, id events.RequestID, kvRev uint64) error
	// RemoveGrant removes a revoked grant past its tenant's
	// request_retention, if its stored revision is still kvRev (the
	// Sweeper's action).
	RemoveGrant(ctx context.Context, tenant events.TenantID, id events.GrantID, kvRev uint64) error
}

// DefaultReviewTimeout bounds an agent decider's review (SPEC §3).
const DefaultReviewTimeout = 2 * time.Minute

// Timers keeps one timer per request this process owns, set from the
// request mirror's changes (so it recovers every timer when the mirror
// replays at start, and never scans periodically), and acts when one
// fires. It holds every pending request (a terminal one's removal is the
// Sweeper's), and arms those its Group says it owns; when
// the group changes (a process joined or left) it arms what it now owns
// and stops what it no longer does. Its timers run on Clock and stop when
// Run returns.
type Timers struct {
	views *views.Views
	acts  TimeActions
	log   *slog.Logger
	clock clock.Clock
	owns  func(key string) bool

	mu      sync.Mutex
	timed   map[string]kvstate.Record // every record with a time to act at, by key
	timers  map[string]func() bool    // each armed timer's stop
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
	Views *views.Views
	Act   TimeActions
	// Group, if set, shares the timers out among the deciders processes:
	// this process arms only the requests it owns. Without it, every
	// request is armed here (one deciders process).
	Group *Group
	// Clock is the time timers run on. Default clock.System.
	Clock clock.Clock
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// NewTimers validates cfg and returns Timers. Errors: ErrConfig.
func NewTimers(cfg TimersConfig) (*Timers, error) {
	if cfg.Views == nil || cfg.Act == nil {
		return nil, fmt.Errorf("%w: timers need the views and their actions", ErrConfig)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	t := &Timers{views: cfg.Views, acts: cfg.Act, log: cfg.Logger, clock: cfg.Clock, owns: func(string) bool { return true },
		timed: map[string]kvstate.Record{}, timers: map[string]func() bool{}, due: make(chan job, 1024)}
	if cfg.Group != nil {
		t.owns = cfg.Group.Owns
		cfg.Group.OnChange(t.rebalance)
	}
	return t, nil
}

// Observe is the request mirror's OnChange hook.
func (t *Timers) Observe(key string, r kvstate.Record, deleted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.disarm(key)
	delete(t.timed, key)
	if deleted || t.stopped {
		return
	}
	if _, ok := t.when(r); ok {
		r.Trim() // held until it ends: without large arguments, which timers never read
		t.timed[key] = r
		if t.owns(key) {
			t.arm(key, r)
		}
	}
}

// rebalance arms the held requests this process now owns and stops the
// timers of those it no longer does (the Group's OnChange hook).
func (t *Timers) rebalance() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	for key, r := range t.timed {
		owned, armed := t.owns(key), t.timers[key] != nil
		switch {
		case owned && !armed:
			t.arm(key, r)
		case !owned && armed:
			t.disarm(key)
		}
	}
}

// Reconfigured re-arms every timer this process owns from the running
// config (a reload's hook): a member's backup or answer_within, read when
// a timer is armed, may have changed since.
func (t *Timers) Reconfigured() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	for key, r := range t.timed {
		if t.owns(key) {
			t.disarm(key)
			t.arm(key, r)
		}
	}
}

// when is when to act on r: its deadline or review end while pending;
// false once it is terminal (its removal is the Sweeper's).
func (t *Timers) when(r kvstate.Record) (time.Time, bool) {
	if r.Status == events.StatusPending {
		return t.next(r), true
	}
	return time.Time{}, false
}

// arm sets key's timer for r; t.mu held.
func (t *Timers) arm(key string, r kvstate.Record) {
	at, _ := t.when(r)
	j := job{id: r.ID, run: func(ctx context.Context) error { return t.act(ctx, r) }}
	t.timers[key] = t.clock.AfterFunc(at.Sub(t.clock.Now()), func() { t.fire(j) })
}

// disarm stops key's timer, if armed; t.mu held.
func (t *Timers) disarm(key string) {
	if stop := t.timers[key]; stop != nil {
		stop()
		delete(t.timers, key)
	}
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
	for key := range t.timers {
		t.disarm(key)
	}
	clear(t.timed)
	for len(t.due) > 0 { // a fire blocked on a full channel gets through and finds stopped
		<-t.due
	}
}

// next is when r must be looked at: its deadline, or sooner the end of the
// current agent decider's review, or the end of the current person's
// answer_within when they have a backup.
func (t *Timers) next(r kvstate.Record) time.Time {
	at := r.DeadlineAt
	if due, ok := t.reviewDue(r); ok && due.Before(at) {
		at = due
	}
	if due, ok := backupDue(t.views, r); ok && due.Before(at) {
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
	return waitingSince(r).Add(d), true
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
	if r.Approver.Kind == events.KindPerson {
		return t.acts.MoveToBackup(ctx, r.Tenant, r.ID, *r.Approver, r.Revision)
	}
	return t.acts.PassUp(ctx, r.Tenant, r.ID, *r.Approver, r.Revision)
}
