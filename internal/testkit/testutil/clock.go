package testutil

import (
	"sort"
	"sync"
	"time"
)

// Clock is a clock a test steps: Now stands still until Advance, and an
// AfterFunc call runs when Advance passes its time. It satisfies
// clock.Clock and approvals' Now.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*waiter
}

type waiter struct {
	at   time.Time
	f    func()
	done bool
}

// NewClock returns a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arranges f to run (in its own goroutine) when the clock is
// advanced d past now; a d of zero or less runs it at once.
func (c *Clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &waiter{at: c.now.Add(d), f: f}
	if d <= 0 {
		w.done = true
		go f()
		return func() bool { return false }
	}
	c.waiters = append(c.waiters, w)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		stopped := !w.done
		w.done = true
		return stopped
	}
}

// Set moves the clock to at (forward only, as Advance).
func (c *Clock) Set(at time.Time) { c.Advance(at.Sub(c.Now())) }

// Advance moves the clock d forward and runs, in time order, every
// AfterFunc whose time it passed.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*waiter
	keep := c.waiters[:0]
	for _, w := range c.waiters {
		switch {
		case w.done:
		case !w.at.After(c.now):
			w.done = true
			due = append(due, w)
		default:
			keep = append(keep, w)
		}
	}
	c.waiters = keep
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, w := range due {
		go w.f()
	}
}

// Waiting returns the number of AfterFunc calls not yet run or stopped.
func (c *Clock) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, w := range c.waiters {
		if !w.done {
			n++
		}
	}
	return n
}
