package deciders

import "github.com/countersign/countersign/kvstate"

// Timed is the record timers hold for key (false: none).
func Timed(t *Timers, key string) (kvstate.Record, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.timed[key]
	return r, ok
}
