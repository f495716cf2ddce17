package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/countersign/countersign/domain"
)

// submit posts the call with its Idempotency-Key, retrying transient
// failures with the same key and body until the server answers, the
// unreachable limit passes, or ctx ends. Connections that fail before any
// answer (refused, no such host) are retried only on the connect schedule:
// then the server is taken to be down.
func (w *waiter) submit(ctx context.Context) (*domain.Request, error) {
	sctx, cancel := context.WithTimeout(ctx, w.c.unreachable)
	defer cancel()
	bo := w.c.newBackoff()
	dials := 0 // connection failures in a row
	for {
		rec, err := w.trySubmit(sctx)
		if err == nil || !transient(err) {
			return rec, refused(err)
		}
		if sctx.Err() != nil {
			break
		}
		w.last = err
		delay, retry := bo.next(retryAfter(err)), true
		if dials = nextDials(dials, err); dials > 0 {
			delay, retry = connectWait(w.c.connectRetries, dials)
		}
		if !retry {
			return nil, fmt.Errorf("%w (%d connection attempts): %v", ErrUnreachable, dials, err)
		}
		if sleep(sctx, delay) != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, &stoppedError{last: w.last}
	}
	return nil, fmt.Errorf("%w (for %v): %v", ErrUnreachable, w.c.unreachable, w.last)
}

func (w *waiter) trySubmit(ctx context.Context) (*domain.Request, error) {
	ctx, cancel := context.WithTimeout(ctx, w.c.requestTimeout)
	defer cancel()
	hdr := http.Header{"Idempotency-Key": {w.call.IdempotencyKey}}
	data, err := w.c.exchange(ctx, w.clock, http.MethodPost, "/v1/requests", w.body, hdr)
	if err != nil {
		return nil, err
	}
	return decodeRecord(data, "")
}

// await long-polls until rec is terminal. On error it returns the last
// record seen.
func (w *waiter) await(ctx context.Context, rec *domain.Request) (*domain.Request, error) {
	bo := w.c.newBackoff()
	for !rec.Status.Terminal() {
		next, err := w.poll(ctx, rec.ID)
		switch {
		case err == nil:
			rec, w.last = next, nil
			bo.reset()
			continue
		case ctx.Err() != nil:
			return rec, &stoppedError{last: w.last}
		case !transient(err):
			return rec, refused(err)
		}
		w.last = err
		if bo.wait(ctx, retryAfter(err)) != nil {
			return rec, &stoppedError{last: w.last}
		}
	}
	return rec, nil
}

// poll is one long poll, its wait cut to what is left of ctx.
func (w *waiter) poll(ctx context.Context, id domain.RequestID) (*domain.Request, error) {
	wait := w.c.pollWait
	if dl, ok := ctx.Deadline(); ok {
		wait = max(min(wait, time.Until(dl).Truncate(time.Second)), time.Second)
	}
	ctx, cancel := context.WithTimeout(ctx, wait+w.c.requestTimeout)
	defer cancel()
	path := "/v1/requests/" + url.PathEscape(string(id)) + "?wait=" + wait.String()
	data, err := w.c.exchange(ctx, w.clock, http.MethodGet, path, nil, nil)
	if err != nil {
		return nil, err
	}
	return decodeRecord(data, id)
}

// claim spends the approval for this call: one compare-and-set on the
// server. A transient failure is retried; if a lost 200 is retried, the
// server answers already_claimed and the call fails closed.
func (w *waiter) claim(ctx context.Context, id domain.RequestID, digest string) (*domain.Request, error) {
	body, _ := json.Marshal(map[string]string{"call_digest": digest})
	bo := w.c.newBackoff()
	for {
		rec, err := w.tryClaim(ctx, id, body)
		switch {
		case err == nil:
			return rec, nil
		case !transient(err):
			return nil, claimError(err)
		case ctx.Err() != nil || bo.wait(ctx, retryAfter(err)) != nil:
			return nil, &stoppedError{last: err}
		}
	}
}

func (w *waiter) tryClaim(ctx context.Context, id domain.RequestID, body []byte) (*domain.Request, error) {
	ctx, cancel := context.WithTimeout(ctx, w.c.requestTimeout)
	defer cancel()
	path := "/v1/requests/" + url.PathEscape(string(id)) + "/claim"
	data, err := w.c.exchange(ctx, w.clock, http.MethodPost, path, body, nil)
	if err != nil {
		return nil, err
	}
	rec, err := decodeRecord(data, id)
	if err == nil && (rec.Status != domain.StatusApproved || rec.ClaimedAt == nil) {
		err = fmt.Errorf("%w: claim answered status %q, claimed_at %v", ErrBadResponse, rec.Status, rec.ClaimedAt)
	}
	return rec, err
}

// claimError maps a refused claim to the package's errors.
func claimError(err error) error {
	var se *statusError
	if errors.As(err, &se) && se.problem.Status == http.StatusConflict {
		switch se.problem.Reason {
		case "already_claimed":
			return ErrAlreadyClaimed
		case "approval_expired":
			return ErrApprovalExpired
		case "digest_mismatch":
			return ErrDigestMismatch
		case "not_approved":
			return ErrNotApproved
		}
	}
	return refused(err)
}

// cancel cancels the request, best effort: it has its own short timeout and
// runs even when ctx was cancelled.
func (w *waiter) cancel(ctx context.Context, id domain.RequestID) (*domain.Request, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.c.cancelTimeout)
	defer cancel()
	path := "/v1/requests/" + url.PathEscape(string(id)) + "/cancel"
	bo := w.c.newBackoff()
	for {
		data, err := w.c.exchange(ctx, w.clock, http.MethodPost, path, []byte("{}"), nil)
		if err == nil {
			return decodeRecord(data, id)
		}
		if !transient(err) || bo.wait(ctx, retryAfter(err)) != nil {
			return nil, err
		}
	}
}

// nextDials counts connection failures in a row: err failed before any
// answer, or it did not (0).
func nextDials(n int, err error) int {
	if !connectFailed(err) {
		return 0
	}
	return n + 1
}

// connectWait is the wait before retry after the n-th connection failure
// in a row; false when the schedule is spent.
func connectWait(schedule []time.Duration, n int) (time.Duration, bool) {
	if n > len(schedule) {
		return 0, false
	}
	return schedule[n-1], true
}

// connectFailed reports whether err is a failure to connect, before any
// byte of the request reached a server: a refused or unroutable dial, or a
// name that does not resolve.
func connectFailed(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// CancelTurn cancels every request of this agent submitted with turn that
// still waits: call it when the harness interrupts the turn, so nothing of
// it is decided after the agent stopped. It returns the ids cancelled
// (POST /v1/turns/{turn}/cancel), retrying transient failures until ctx
// ends.
func (c *Client) CancelTurn(ctx context.Context, turn string) ([]domain.RequestID, error) {
	path := "/v1/turns/" + url.PathEscape(turn) + "/cancel"
	sc, bo := newServerClock(c.now), c.newBackoff()
	for {
		data, err := c.exchange(ctx, sc, http.MethodPost, path, []byte("{}"), nil)
		if err == nil {
			var out struct {
				Cancelled []domain.RequestID `json:"cancelled"`
			}
			if err := json.Unmarshal(data, &out); err != nil || out.Cancelled == nil {
				return nil, fmt.Errorf("countersign: a turn's cancel answered %q", data)
			}
			return out.Cancelled, nil
		}
		if !transient(err) || bo.wait(ctx, retryAfter(err)) != nil {
			return nil, err
		}
	}
}
