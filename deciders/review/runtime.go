package review

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
)

// failedReason is the reason of the abstention a runtime sends when its
// review failed; the failure itself is only logged.
const failedReason = "the agent's runtime could not review this request"

// Runtime takes review offers on Subject in queue group Queue, reviews each
// with Review and hands the answer to Answer. Serve is a Runtime for one
// agent that answers over the bus.
type Runtime struct {
	Subject string // e.g. events.ReviewSubject(tenant, agent), or events.ReviewFilter
	Queue   string // e.g. events.ReviewQueue
	// Accept, if set, tells which offers to take; an offer it refuses is
	// left untaken (no reply).
	Accept func(Bundle) bool
	Review Func
	// Answer delivers an answer; ErrConflict is logged at info, any other
	// error at warn.
	Answer      func(ctx context.Context, b Bundle, a Answer) error
	Concurrency int // reviews at once; default DefaultConcurrency
	Logger      *slog.Logger

	sem      chan struct{}
	mu       sync.Mutex
	inflight map[string]bool
	wg       sync.WaitGroup
}

// Run subscribes nc and takes offers until ctx ends; it then unsubscribes,
// waits for the reviews in flight (their ctx has ended) and returns nil.
func (rt *Runtime) Run(ctx context.Context, nc *nats.Conn) error {
	if rt.Subject == "" || rt.Queue == "" || rt.Review == nil || rt.Answer == nil {
		return errors.New("review: runtime needs Subject, Queue, Review and Answer")
	}
	if rt.Concurrency < 1 {
		rt.Concurrency = DefaultConcurrency
	}
	if rt.Logger == nil {
		rt.Logger = slog.Default()
	}
	rt.sem, rt.inflight = make(chan struct{}, rt.Concurrency), map[string]bool{}
	sub, err := nc.QueueSubscribe(rt.Subject, rt.Queue, func(m *nats.Msg) { rt.take(ctx, m) })
	if err != nil {
		return fmt.Errorf("review: subscribe %s: %w", rt.Subject, err)
	}
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("review: subscribe %s: %w", rt.Subject, err)
	}
	<-ctx.Done()
	_ = sub.Unsubscribe()
	rt.wg.Wait()
	return nil
}

// take is the subscription's handler: it decides at once whether to take
// the offer, replies empty to take it, and reviews in the background.
func (rt *Runtime) take(ctx context.Context, m *nats.Msg) {
	b, err := Decode(m)
	if err != nil {
		rt.Logger.Warn("review: offer left untaken", "subject", m.Subject, "err", err)
		return
	}
	if rt.Accept != nil && !rt.Accept(b) {
		return
	}
	key := string(b.Request.Tenant) + "." + string(b.Request.ID) + ":" + strconv.FormatUint(b.Request.Revision, 10)
	switch rt.claim(key) {
	case busy:
		return
	case repeated:
		_ = m.Respond(nil) // an offer already under review here: taken, not reviewed twice
		return
	}
	if err := m.Respond(nil); err != nil {
		rt.release(key)
		return
	}
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		defer rt.release(key)
		rt.review(ctx, b)
	}()
}

type claimed int

const (
	reserved claimed = iota // a slot is reserved for the review
	repeated                // the same request and revision is under review here
	busy                    // every slot is taken: leave the offer
)

// claim reserves a review slot for key.
func (rt *Runtime) claim(key string) claimed {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.inflight[key] {
		return repeated
	}
	select {
	case rt.sem <- struct{}{}:
		rt.inflight[key] = true
		return reserved
	default:
		return busy
	}
}

func (rt *Runtime) release(key string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.inflight, key)
	<-rt.sem
}

// review runs Review within the request's deadline and answers; a failure
// abstains, a stop answers nothing.
func (rt *Runtime) review(ctx context.Context, b Bundle) {
	rctx, cancel := context.WithDeadline(ctx, b.Request.DeadlineAt)
	defer cancel()
	a, err := rt.safeReview(rctx, b)
	if ctx.Err() != nil {
		return
	}
	if err == nil {
		err = validDecision(a.Decision)
	}
	if err != nil {
		rt.Logger.Warn("review: review failed; abstaining", "request", b.Request.ID, "err", err)
		a = Answer{Decision: Abstain, Reason: failedReason}
	}
	err = rt.Answer(rctx, b, a)
	switch {
	case errors.Is(err, ErrConflict):
		rt.Logger.Info("review: answer not needed any more", "request", b.Request.ID, "err", err)
	case err != nil:
		rt.Logger.Warn("review: answer not delivered", "request", b.Request.ID, "err", err)
	}
}

func (rt *Runtime) safeReview(ctx context.Context, b Bundle) (a Answer, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("review panicked: %v", p)
		}
	}()
	return rt.Review(ctx, b)
}

func validDecision(d string) error {
	switch d {
	case Allow, Deny, Abstain:
		return nil
	}
	return fmt.Errorf("unknown decision %q", d)
}
