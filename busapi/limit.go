package busapi

import "sync"

// limiter bounds the messages in flight per key (a token's hash).
type limiter struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newLimiter(max int) *limiter { return &limiter{max: max, n: map[string]int{}} }

// acquire takes a slot for key; false when key already holds max.
func (l *limiter) acquire(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[key] >= l.max {
		return false
	}
	l.n[key]++
	return true
}

// release returns a slot taken by acquire.
func (l *limiter) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[key]--; l.n[key] <= 0 {
		delete(l.n, key)
	}
}
