// Package backoff owns how long countersign waits before it tries again:
// one exponential Policy with optional jitter, a Sleep that ends with ctx,
// and Retry, which calls a function until it succeeds, fails for good,
// runs out of attempts or ctx ends. It imports only the standard library,
// so that every package that retries, the adapter included, shares it.
package backoff

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Policy is an exponential backoff. The zero value waits nothing.
type Policy struct {
	// Base is the delay before the first retry; each later one doubles it.
	Base time.Duration
	// Max caps the delay. Zero: no cap.
	Max time.Duration
	// Jitter draws each delay between half and all of it, so that many
	// clients that failed together do not retry together.
	Jitter bool
}

// Delay is the wait after failed attempt n (1-based): Base·2^(n-1),
// capped at Max, jittered when the policy says so.
func (p Policy) Delay(n int) time.Duration {
	d := p.Base
	for i := 1; i < n && d > 0 && (p.Max == 0 || d < p.Max) && d < time.Duration(1)<<62; i++ {
		d *= 2
	}
	if p.Max > 0 {
		d = min(d, p.Max)
	}
	if p.Jitter && d > 0 {
		d = d/2 + rand.N(d/2+1)
	}
	return d
}

// Sleep waits d; it returns ctx's error if ctx ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retry calls f until it returns nil, an error wrapped by Permanent, or
// attempts calls failed, sleeping p.Delay(n) after failed call n. It
// returns nil, f's last error (unwrapped from Permanent), or ctx's error
// joined with f's last one when ctx ended first (attempts <= 0: until ctx
// ends).
func Retry(ctx context.Context, p Policy, attempts int, f func(context.Context) error) error {
	for n := 1; ; n++ {
		err := f(ctx)
		var perm *permanent
		switch {
		case err == nil:
			return nil
		case errors.As(err, &perm):
			return perm.err
		case attempts > 0 && n >= attempts:
			return err
		}
		if serr := Sleep(ctx, p.Delay(n)); serr != nil {
			return errors.Join(serr, err)
		}
	}
}

// Permanent marks err as one that retrying does not cure: Retry returns
// it at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanent{err}
}

type permanent struct{ err error }

func (p *permanent) Error() string { return p.err.Error() }
func (p *permanent) Unwrap() error { return p.err }
