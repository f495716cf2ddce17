package notify

import (
	"context"
	"time"
)

// Clock is the time the feeds' leases go by. The app passes the clock the
// deciders use (deciders.SystemClock, or the testutil.Clock a test steps).
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed on this
	// clock, unless the returned stop is called first.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// systemClock is the system's clock, the default.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// sleep waits d on clock c; it reports false if ctx ended first.
func sleep(ctx context.Context, c Clock, d time.Duration) bool {
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
