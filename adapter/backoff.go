package adapter

import (
	"context"
	"math/rand/v2"
	"time"
)

// maxRetryAfter caps how long a server's Retry-After may hold a retry.
const maxRetryAfter = 30 * time.Second

// backoff is an exponential delay with jitter: each wait is between half
// and all of min·2ⁿ, capped at max, and at least a Retry-After hint.
type backoff struct {
	min, max time.Duration
	n        int
}

func (c *Client) newBackoff() *backoff { return &backoff{min: c.backoffMin, max: c.backoffMax} }

func (b *backoff) next(hint time.Duration) time.Duration {
	d := b.max
	if b.n < 30 && b.min<<b.n < b.max {
		d = b.min << b.n
	}
	b.n++
	d = d/2 + rand.N(d/2+1)
	return max(d, min(hint, maxRetryAfter))
}

// reset starts the delays over after a success.
func (b *backoff) reset() { b.n = 0 }

// wait sleeps the next delay; it returns ctx.Err() if ctx ends first.
func (b *backoff) wait(ctx context.Context, hint time.Duration) error {
	return sleep(ctx, b.next(hint))
}

// sleep waits d; it returns ctx.Err() if ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
