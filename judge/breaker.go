package judge

import (
	"sync"
	"time"
)

// breaker is a consecutive-failure circuit breaker. Closed: every call goes
// through. After limit consecutive failures it opens for cooldown and calls
// are refused. After the cooldown one trial call goes through (half-open):
// its success closes the breaker, its failure opens it for another cooldown.
type breaker struct {
	mu        sync.Mutex
	limit     int
	cooldown  time.Duration
	failures  int
	openUntil time.Time
	trialOut  bool // a half-open trial call is in flight
	now       func() time.Time
}

func newBreaker(limit int, cooldown time.Duration) *breaker {
	return &breaker{limit: limit, cooldown: cooldown, now: time.Now}
}

// allow reports whether a call may go through, and whether it is the
// half-open trial. A caller that got ok must call record exactly once.
func (b *breaker) allow() (trial, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.limit {
		return false, true
	}
	if b.trialOut || b.now().Before(b.openUntil) {
		return false, false
	}
	b.trialOut = true
	return true, true
}

// record notes the result of a call that allow let through.
func (b *breaker) record(trial, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if trial {
		b.trialOut = false
	}
	if !failed {
		b.failures = 0
		return
	}
	b.failures++
	if b.failures >= b.limit {
		b.openUntil = b.now().Add(b.cooldown)
	}
}
