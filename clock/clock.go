// Package clock owns the time countersign's workers go by: the Clock
// interface the deciders' timers, offers, retention sweeps and the
// webhook feeds' leases take, the system's clock, and a sleep on any
// Clock. Tests step a testutil.Clock instead of waiting.
package clock

import (
	"context"
	"time"
)

// Clock is a source of time and of timers.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed on this
	// clock, unless the returned stop is called first; stop reports
	// whether it prevented the call.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// System is the system's clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (System) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// Sleep waits d on c; it reports false if ctx ended first.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	fired := make(chan struct{})
	stop := c.AfterFunc(d, func() { close(fired) })
	defer stop()
	select {
	case <-ctx.Done():
		return false
	case <-fired:
		return true
	}
}
