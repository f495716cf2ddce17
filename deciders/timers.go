package deciders

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// TimeActions are what the timer worker does when time runs out. Each is
// idempotent and do nothing to a request that has moved on.
type TimeActions interface {
	// Expire ends a request still pending at or after its deadline.
	Expire(ctx context.Context, tenant domain.TenantID, id domain.RequestID) error
	// PassUp moves a request still waiting on agent approver at revision
	// rev to the decider above, as an abstention (review_timeout).
	PassUp(ctx context.Context, tenant domain.TenantID, id domain.RequestID, approver domain.Ref, rev uint64) error
	// MoveToBackup moves a request still waiting on person approver at
	// revision rev to their backup (answer_within, SPEC §12).
	MoveToBackup(ctx context.Context, tenant domain.TenantID, id domain.RequestID, approver domain.Ref, rev uint64) error
	// RemoveRequest removes a terminal request past its tenant's
	// request_retention, if its stored revision is still kvRev (the
	// Sweeper's action).
	RemoveRequest(ctx context.Context, tenant domain.TenantID, id domain.RequestID, kvRev uint64) error
	// RemoveGrant removes a revoked grant past its tenant's
	// request_retention, if its stored revision is still kvRev (the
	// Sweeper's action).
	RemoveGrant(ctx context.Context, tenant domain.TenantID, id domain.GrantID, kvRev uint64) error
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
	timed   map[string]*timed // every pending request, by key
	due     chan *timed
	stopped bool
}

// timed is what Timers hold of a pending request: only what arming its
// timer and acting on it read, not the record (a million pending
// requests each hold one). Approver and escalation are the record's own,
// which a change never writes (domain.Request.Clone).
type timed struct {
	tenant     domain.TenantID
	id         domain.RequestID
	approver   *domain.Ref
	escalation *domain.Escalation
	deadline   time.Time
	since      time.Time // waitingSince
	rev        uint64
	stop       func() bool // the armed timer's stop (nil: not armed)
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
		timed: map[string]*timed{}, due: make(chan *timed, 1024)}
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
	if old := t.timed[key]; old != nil {
		old.disarm()
		delete(t.timed, key)
	}
	if deleted || t.stopped || r.Status != domain.StatusPending {
		return // a terminal request's removal is the Sweeper's
	}
	p := &timed{tenant: r.Tenant, id: r.ID, approver: r.Approver, escalation: r.Escalation,
		deadline: r.DeadlineAt, since: waitingSince(r), rev: r.Revision}
	t.timed[key] = p
	if t.owns(key) {
		t.arm(p)
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
	for key, p := range t.timed {
		owned, armed := t.owns(key), p.stop != nil
		switch {
		case owned && !armed:
			t.arm(p)
		case !owned && armed:
			p.disarm()
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
	for key, p := range t.timed {
		if t.owns(key) {
			p.disarm()
			t.arm(p)
		}
	}
}

// arm sets p's timer; t.mu held.
func (t *Timers) arm(p *timed) {
	p.stop = t.clock.AfterFunc(t.next(p).Sub(t.clock.Now()), func() { t.fire(p) })
}

// disarm stops p's timer, if armed; t.mu held.
func (p *timed) disarm() {
	if p.stop != nil {
		p.stop()
		p.stop = nil
	}
}

// fire hands a due request to Run, unless Run has returned.
func (t *Timers) fire(p *timed) {
	t.mu.Lock()
	stopped, due := t.stopped, t.due
	t.mu.Unlock()
	if !stopped {
		due <- p
	}
}

// stop ends every timer; later Observes arm none.
func (t *Timers) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	for _, p := range t.timed {
		p.disarm()
	}
	clear(t.timed)
	for len(t.due) > 0 { // a fire blocked on a full channel gets through and finds stopped
		<-t.due
	}
}

// next is when p must be looked at: its deadline, or sooner the end of the
// current agent decider's review, or the end of the current person's
// answer_within when they have a backup.
func (t *Timers) next(p *timed) time.Time {
	at := p.deadline
	if due, ok := t.reviewDue(p); ok && due.Before(at) {
		at = due
	}
	if due, ok := backupDue(t.views, p.tenant, p.approver, p.escalation, p.since); ok && due.Before(at) {
		at = due
	}
	return at
}

func (t *Timers) reviewDue(p *timed) (time.Time, bool) {
	if p.approver == nil || p.approver.Kind != domain.KindAgent {
		return time.Time{}, false
	}
	a, ok := t.views.Agent(p.tenant, domain.AgentID(p.approver.ID))
	if !ok {
		return time.Time{}, false
	}
	d := a.ReviewTimeout
	if d <= 0 {
		d = DefaultReviewTimeout
	}
	return p.since.Add(d), true
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
		case p := <-due:
			if err := t.act(ctx, p); err != nil && ctx.Err() == nil {
				t.log.Warn("timer action failed; retrying", "request", p.id, "err", err)
				t.clock.AfterFunc(time.Second, func() { t.fire(p) })
			}
		}
	}
}

func (t *Timers) act(ctx context.Context, p *timed) error {
	if !t.clock.Now().Before(p.deadline) {
		return t.acts.Expire(ctx, p.tenant, p.id)
	}
	if p.approver.Kind == domain.KindPerson {
		return t.acts.MoveToBackup(ctx, p.tenant, p.id, *p.approver, p.rev)
	}
	return t.acts.PassUp(ctx, p.tenant, p.id, *p.approver, p.rev)
}
