package adapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/domain"
)

// Do asks countersign whether call may run, holds it until there is a
// decision, and calls run at most once: only when the request is approved,
// the approval has not expired (by the server's clock as learned from its
// Date headers), its call_digest is the digest of this very call, and the
// approval was claimed on the server right before. run gets ctx.
//
// Do returns the Outcome (see Kind). Its error is run's error when the call
// ran, ErrInvalidCall when the call could not be submitted, and nil
// otherwise: not running is an outcome, not an error.
//
// Waiting: the submit is retried with the same Idempotency-Key until the
// server answers (a lost response recovers the same request), except that
// connections refused before any answer are retried only on the connect
// schedule (WithConnectRetries, about 10 s) before Do reports
// ErrUnreachable: a server that is down does not hold the call; a poll that
// ends pending, a connection error, a 5xx or a 429 is not a decision, and
// the adapter polls again with a jittered backoff. The wait ends at the
// adapter's limit (WithWaitLimit, or ctx's deadline): the call does not run,
// the request is cancelled, and the Outcome is NotObtained (ErrWaitLimit).
// If ctx is cancelled while the call waits, the request is cancelled (best
// effort, within WithCancelTimeout) and the Outcome is Cancelled
// (ErrAbandoned). If the submit never reached the server, no request is
// known, and none can be cancelled; it expires at its (shortened) deadline.
func (c *Client) Do(ctx context.Context, call Call, run func(context.Context) error) (Outcome, error) {
	if err := check(call, run); err != nil {
		return Outcome{Kind: NotObtained, Err: err}, err
	}
	call.Arguments = bytes.Clone(call.Arguments)
	if call.IdempotencyKey == "" {
		call.IdempotencyKey = newIdempotencyKey()
	}
	p := c.plan(ctx, call.Timeout)
	body, err := call.body(p.timeout)
	if err != nil {
		err = fmt.Errorf("%w: %v", ErrInvalidCall, err)
		return Outcome{Kind: NotObtained, Err: err}, err
	}
	w := &waiter{c: c, call: call, body: body, plan: p, clock: newServerClock(c.now)}
	waitCtx, cancel := p.bound(ctx)
	defer cancel()
	rec, err := w.obtain(waitCtx)
	if err != nil {
		return w.giveUp(ctx, rec, w.classify(ctx, err)), nil
	}
	return w.apply(ctx, waitCtx, rec, run)
}

func check(call Call, run func(context.Context) error) error {
	if run == nil {
		return fmt.Errorf("%w: nil run function", ErrInvalidCall)
	}
	return call.validate()
}

// plan is how long one call may wait and what timeout it requests.
type plan struct {
	timeout time.Duration // requested; 0: the tenant's default
	limit   time.Duration // give up after this; 0: at deadline_at + margin/2
	margin  time.Duration
}

// plan fits the requested timeout inside the wait limit (the smaller of
// WithWaitLimit and ctx's deadline) with a margin, and gives up half a
// margin before the limit.
func (c *Client) plan(ctx context.Context, requested time.Duration) plan {
	limit, ok := c.waitLimit, c.waitLimit > 0
	if dl, has := ctx.Deadline(); has {
		if d := time.Until(dl); !ok || d < limit {
			limit, ok = max(d, time.Millisecond), true
		}
	}
	if !ok {
		return plan{timeout: requested, margin: c.margin}
	}
	m := min(c.margin, limit/4)
	t := max((limit - m).Truncate(time.Second), time.Second)
	if requested > 0 && requested < t {
		t = requested
	}
	return plan{timeout: t, limit: limit - m/2, margin: m}
}

func (p plan) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.limit > 0 {
		return context.WithTimeout(ctx, p.limit)
	}
	return context.WithCancel(ctx)
}

// waiter carries one Do.
type waiter struct {
	c     *Client
	call  Call
	body  []byte
	plan  plan
	clock *serverClock
	last  error // the last transient failure, nil after a success
}

// stoppedError: a retry loop ended because its context ended.
type stoppedError struct{ last error }

func (e *stoppedError) Error() string { return "stopped waiting" }

// obtain submits the call and waits for a terminal record. On error it
// returns the last record seen, if any.
func (w *waiter) obtain(ctx context.Context) (*domain.Request, error) {
	rec, err := w.submit(ctx)
	if err != nil {
		return nil, err
	}
	if w.plan.limit == 0 && !rec.Status.Terminal() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.clock.until(rec.DeadlineAt)+w.plan.margin/2)
		defer cancel()
	}
	return w.await(ctx, rec)
}

// classify turns how the wait ended into the Outcome's cause.
func (w *waiter) classify(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ErrAbandoned
	}
	var st *stoppedError
	if !errors.As(err, &st) {
		return err
	}
	if st.last == nil {
		return ErrWaitLimit
	}
	return fmt.Errorf("%w; %w: %v", ErrWaitLimit, ErrUnreachable, st.last)
}

// apply acts on a terminal record.
func (w *waiter) apply(ctx, waitCtx context.Context, rec *domain.Request, run func(context.Context) error) (Outcome, error) {
	switch rec.Status {
	case domain.StatusApproved:
		return w.useApproval(ctx, waitCtx, rec, run)
	case domain.StatusDenied:
		return Outcome{Kind: Denied, Request: rec}, nil
	case domain.StatusExpired:
		return Outcome{Kind: Expired, Request: rec}, nil
	case domain.StatusCancelled:
		return Outcome{Kind: Cancelled, Request: rec}, nil
	}
	return Outcome{Kind: NotObtained, Request: rec, Err: fmt.Errorf("%w: status %q", ErrBadResponse, rec.Status)}, nil
}

// useApproval checks the approval against this call and the clock, claims
// it, and runs the call.
func (w *waiter) useApproval(ctx, waitCtx context.Context, rec *domain.Request, run func(context.Context) error) (Outcome, error) {
	digest, err := w.check(rec)
	if err != nil {
		return notRun(rec, err), nil
	}
	claimed, err := w.claim(waitCtx, rec.ID, digest)
	if err != nil {
		return notRun(rec, w.classify(ctx, err)), nil
	}
	if ctx.Err() != nil {
		return notRun(claimed, ErrAbandoned), nil
	}
	if rec.Edited != nil {
		w.call.TakeEdits(bytes.Clone(rec.Arguments))
	}
	return Outcome{Kind: Ran, Request: claimed}, run(ctx)
}

// check verifies, right before the claim, that the approval is for this
// call and has not expired.
func (w *waiter) check(rec *domain.Request) (string, error) {
	digest, err := w.call.digest(rec.Tenant, rec.Agent)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidCall, err)
	}
	if rec.Edited != nil {
		if digest, err = w.edited(rec); err != nil {
			return "", err
		}
	}
	if rec.CallDigest != digest {
		return "", fmt.Errorf("%w: approved %s, about to run %s", ErrDigestMismatch, rec.CallDigest, digest)
	}
	if w.clock.until(*rec.Decision.ExpiresAt) <= 0 {
		return "", ErrApprovalExpired
	}
	return digest, nil
}

// edited returns the digest of this call with the approval's edited
// arguments, which the record's call_digest must then be: everything
// but the arguments is still this very call.
func (w *waiter) edited(rec *domain.Request) (string, error) {
	if w.call.TakeEdits == nil {
		return "", ErrEdited
	}
	call := w.call
	call.Arguments = rec.Arguments
	if err := validArguments(call.Arguments); err != nil {
		return "", fmt.Errorf("%w: edited arguments: %v", ErrBadResponse, err)
	}
	return call.digest(rec.Tenant, rec.Agent)
}

// notRun is the Outcome of an approved call that did not run.
func notRun(rec *domain.Request, err error) Outcome {
	switch {
	case errors.Is(err, ErrApprovalExpired):
		return Outcome{Kind: ApprovalExpired, Request: rec, Err: err}
	case errors.Is(err, ErrAbandoned):
		return Outcome{Kind: Cancelled, Request: rec, Err: err}
	}
	return Outcome{Kind: NotObtained, Request: rec, Err: err}
}

// giveUp cancels a still-pending request and reports err.
func (w *waiter) giveUp(ctx context.Context, rec *domain.Request, err error) Outcome {
	if rec != nil && !rec.Status.Terminal() {
		if cancelled, cerr := w.cancel(ctx, rec.ID); cerr == nil {
			rec = cancelled
		}
	}
	if errors.Is(err, ErrAbandoned) {
		return Outcome{Kind: Cancelled, Request: rec, Err: err}
	}
	return Outcome{Kind: NotObtained, Request: rec, Err: err}
}
