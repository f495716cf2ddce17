package deciders

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	retry "github.com/countersign/countersign/backoff"
	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
	"github.com/nats-io/nats.go"
)

// OffersConfig configures Offers.
type OffersConfig struct {
	// Conn sends the offers (core NATS requests). Required.
	Conn *nats.Conn
	// Views resolve deciders and tell whether a request moved on. Required.
	Views *views.Views
	// Store reads the requests Views hold without their arguments
	// (kvstate.Record.Partial), to offer them again at Resume. Required.
	Store *kvstate.Store
	// TakeWait is how long an offer waits for a runtime to take it.
	// Default 5s (SPEC §9).
	TakeWait time.Duration
	// Retry is the first delay between offers of one review, doubled after
	// each offer nobody took up to MaxRetry. Default 5s.
	Retry time.Duration
	// MaxRetry caps the delay between offers. Default 1m.
	MaxRetry time.Duration
	// Clock times the take wait and the delay between offers. Default
	// clock.System.
	Clock clock.Clock
	// Logger default slog.Default().
	Logger *slog.Logger
}

func (c *OffersConfig) setDefaults() {
	if c.TakeWait == 0 {
		c.TakeWait = 5 * time.Second
	}
	if c.Retry == 0 {
		c.Retry = 5 * time.Second
	}
	if c.MaxRetry == 0 {
		c.MaxRetry = time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
}

// Validate reports a missing or impossible setting.
func (c *OffersConfig) Validate() error {
	switch {
	case c.Conn == nil || c.Views == nil || c.Store == nil:
		return fmt.Errorf("%w: offers need Conn, Views and Store", ErrConfig)
	case c.TakeWait <= 0 || c.Retry <= 0 || c.MaxRetry < c.Retry:
		return fmt.Errorf("%w: offers need TakeWait > 0 and 0 < Retry <= MaxRetry", ErrConfig)
	}
	return nil
}

// Offers offers agent deciders' reviews to their runtimes (SPEC §9): a core
// NATS request on countersign.<tenant>.review.<agent>, a CloudEvent of type
// dev.countersign.review.requested whose data is the review bundle. An
// empty reply takes the review. An offer nobody takes is offered again
// with backoff for as long as the request waits on that agent at that
// revision; the review_timeout (Timers) then passes it up. The loops live
// in this process only: a crash loses them, and the work messages that the
// outbox re-derives at start bring them back. No JetStream consumer or
// message is held while an offer waits or a runtime thinks.
type Offers struct {
	cfg   OffersConfig
	mu    sync.Mutex
	loops map[string]*offerLoop // by request key
	wg    sync.WaitGroup
}

type offerLoop struct {
	rev    uint64
	cancel context.CancelFunc
}

// NewOffers validates cfg and returns Offers.
func NewOffers(cfg OffersConfig) (*Offers, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Offers{cfg: cfg, loops: map[string]*offerLoop{}}, nil
}

// Observe is the request mirror's OnChange hook: a request that moved past
// the revision being offered (escalated, decided, cancelled, expired: every
// change bumps the revision) or was removed stops its offers.
func (o *Offers) Observe(key string, r kvstate.Record, deleted bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	// Only a later revision counts: a mirror that lags behind the work
	// message may still deliver older ones.
	if l := o.loops[key]; l != nil && (deleted || r.Revision > l.rev) {
		l.cancel()
		delete(o.loops, key)
	}
}

// Offer starts offering r to its agent decider's runtimes, unless r does
// not wait on an agent, or an offer of r at this or a later revision runs
// already. traceparent (may be empty) is carried into the offer's event.
// It returns at once; the offers stop when ctx ends.
func (o *Offers) Offer(ctx context.Context, r *domain.Request, traceparent string) {
	if ctx.Err() != nil || r.Approver == nil || r.Approver.Kind != domain.KindAgent || r.Status != domain.StatusPending {
		return
	}
	key := kvstate.RequestKey(r.Tenant, r.ID)
	o.mu.Lock()
	defer o.mu.Unlock()
	if l := o.loops[key]; l != nil {
		if l.rev >= r.Revision {
			return
		}
		l.cancel()
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &offerLoop{rev: r.Revision, cancel: cancel}
	o.loops[key] = l
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		o.run(lctx, key, r, traceparent)
		o.done(key, l)
	}()
}

// Resume offers every review this process's request mirror holds pending
// on an agent, once the mirror is ready: the offer loops of a stopped
// process die with it, and the work message that started them was acked
// (and a re-derived copy within the work stream's dedup window is
// dropped). With several deciders processes each start re-offers them all;
// offers are at least once, and the offered revision makes a repeat
// harmless. It returns when every loop has started, or when ctx ends.
func (o *Offers) Resume(ctx context.Context) {
	select {
	case <-o.cfg.Views.Requests().Ready():
	case <-ctx.Done():
		return
	}
	var pending []kvstate.Record
	o.cfg.Views.Requests().Each(func(_ string, r kvstate.Record) {
		if r.Status == domain.StatusPending && r.Approver != nil && r.Approver.Kind == domain.KindAgent {
			pending = append(pending, r)
		}
	})
	for _, r := range pending {
		full, err := o.cfg.Store.Full(ctx, r)
		if err != nil { // removed meanwhile, or NATS is away
			o.cfg.Logger.Warn("deciders: cannot read a review to offer again", "request", r.ID, "err", err)
			continue
		}
		o.Offer(ctx, &full.Request, "")
	}
}

// Wait blocks until every offer loop has stopped (after their ctx ended).
func (o *Offers) Wait() { o.wg.Wait() }

func (o *Offers) done(key string, l *offerLoop) {
	o.mu.Lock()
	defer o.mu.Unlock()
	l.cancel()
	if o.loops[key] == l {
		delete(o.loops, key)
	}
}

// run offers r until a runtime takes it, r moves on, or ctx ends.
func (o *Offers) run(ctx context.Context, key string, r *domain.Request, traceparent string) {
	msg, err := o.message(r, traceparent)
	if err != nil {
		o.cfg.Logger.Warn("deciders: cannot offer review", "request", r.ID, "err", err)
		return
	}
	clk, policy := o.cfg.Clock, retry.Policy{Base: o.cfg.Retry, Max: o.cfg.MaxRetry}
	for n := 1; o.current(key, r); n++ {
		next := clk.Now().Add(policy.Delay(n))
		if o.offerOnce(ctx, msg) || !clock.Sleep(ctx, clk, next.Sub(clk.Now())) {
			return
		}
	}
}

// offerOnce sends one offer and reports whether a runtime took it within
// TakeWait on the clock.
func (o *Offers) offerOnce(ctx context.Context, msg *nats.Msg) bool {
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer o.cfg.Clock.AfterFunc(o.cfg.TakeWait, cancel)()
	_, err := o.cfg.Conn.RequestMsgWithContext(octx, msg)
	return err == nil
}

// current reports whether r still waits on the same decider at the same
// revision, as far as this process's mirror knows (a mirror that lags
// behind the work message does not stop the offer).
func (o *Offers) current(key string, r *domain.Request) bool {
	m, _, ok := o.cfg.Views.Requests().Held(key)
	return !ok || (m.Revision <= r.Revision && m.Status == string(domain.StatusPending))
}

// message builds the offer: the bundle as data, the CloudEvent in headers.
// Offers of one review at one revision share one event id.
func (o *Offers) message(r *domain.Request, traceparent string) (*nats.Msg, error) {
	decider, ok := o.cfg.Views.Agent(r.Tenant, domain.AgentID(r.Approver.ID))
	if !ok {
		return nil, fmt.Errorf("unknown agent decider %s", r.Approver.ID)
	}
	data, err := json.Marshal(domain.NewReviewBundle(r, decider, BriefOf(o.cfg.Views, r)))
	if err != nil {
		return nil, err
	}
	msg := &nats.Msg{Subject: events.ReviewSubject(r.Tenant, decider.ID), Data: data, Header: nats.Header{}}
	e := events.NewEvent(events.TypeReviewRequested, r.Tenant, string(r.ID), r.Revision, o.cfg.Clock.Now(), traceparent)
	return msg, events.EncodeHeaders(e, msg.Header)
}
