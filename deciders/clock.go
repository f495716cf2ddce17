package deciders

import (
	"context"
	"time"
)

// Clock is the time the deciders act by. Tests step one (testutil.Clock);
// production uses the system's (SystemClock).
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed on this
	// clock, unless the returned stop is called first; stop reports
	// whether it prevented the call.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock is the system's clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// sleep waits d on clock c; it reports false if ctx ended first.
func sleep(ctx context.Context, c Clock, d time.Duration) bool {
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
