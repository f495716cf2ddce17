package adapter

import (
	"context"
	"time"

	retry "github.com/countersign/countersign/backoff"
)

// maxRetryAfter caps how long a server's Retry-After may hold a retry.
const maxRetryAfter = 30 * time.Second

// backoff is the client's retry delay, the shared jittered exponential
// one (package backoff): each wait is between half and all of min·2ⁿ,
// capped at max, and at least a Retry-After hint.
type backoff struct {
	min, max time.Duration
	n        int
}

func (c *Client) newBackoff() *backoff { return &backoff{min: c.backoffMin, max: c.backoffMax} }

func (b *backoff) next(hint time.Duration) time.Duration {
	b.n++
	d := retry.Policy{Base: b.min, Max: b.max, Jitter: true}.Delay(b.n)
	return max(d, min(hint, maxRetryAfter))
}

// reset starts the delays over after a success.
func (b *backoff) reset() { b.n = 0 }

// wait sleeps the next delay; it returns ctx.Err() if ctx ends first.
func (b *backoff) wait(ctx context.Context, hint time.Duration) error {
	return sleep(ctx, b.next(hint))
}

// sleep waits d; it returns ctx.Err() if ctx ends first.
func sleep(ctx context.Context, d time.Duration) error { return retry.Sleep(ctx, d) }
