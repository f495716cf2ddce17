//go:build cluster

package cluster

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// tracked is one acknowledged request and what the test drove it to.
type tracked struct {
	id, kind string
	// want is the terminal status the test drove ("" while a race decides
	// it), wantBy the decision's by.kind.
	want, wantBy string
}

// ledger is everything the load learned: acknowledged requests, the
// terminal states seen for each across all responses and polls, and the
// figures of the run.
type ledger struct {
	mu       sync.Mutex
	reqs     map[string]*tracked
	seen     map[string]map[string]bool // id -> terminal statuses observed
	problems []string

	unacked, answers200, answers409, retries atomic.Int64
	maxSubmit                                atomic.Int64 // ns, retries included
	lastAck, maxGap                          atomic.Int64 // unix ns; ns without an acknowledged submit
	maxLag                                   atomic.Int64 // ns until the other API process showed a write
}

func newLedger() *ledger {
	return &ledger{reqs: map[string]*tracked{}, seen: map[string]map[string]bool{}}
}

func (l *ledger) add(r *tracked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs[r.id] = r
}

func (l *ledger) settle(id, want, by string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs[id].want, l.reqs[id].wantBy = want, by
}

// observe notes a record as some response showed it: a terminal status
// other than one seen before is a second terminal state.
func (l *ledger) observe(r record) {
	if !r.terminal() || r.ID == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[r.ID] == nil {
		l.seen[r.ID] = map[string]bool{}
	}
	l.seen[r.ID][r.Status] = true
}

func (l *ledger) problem(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

func (l *ledger) ids() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.reqs))
	for id := range l.reqs {
		out = append(out, id)
	}
	return out
}

func (l *ledger) submitTook(d time.Duration) { raise(&l.maxSubmit, int64(d)) }

func (l *ledger) lagged(d time.Duration) { raise(&l.maxLag, int64(d)) }

// raise sets m to v if v is larger.
func raise(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}

func (l *ledger) byKind() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, r := range l.reqs {
		out[r.kind]++
	}
	return out
}

func (l *ledger) want(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reqs[id].want
}

// acked notes an acknowledged submit that took d, retries included, and
// the longest time without any acknowledged submit.
func (l *ledger) acked(d time.Duration) {
	l.submitTook(d)
	now := time.Now().UnixNano()
	if last := l.lastAck.Swap(now); last != 0 {
		raise(&l.maxGap, now-last)
	}
}
