package approvals

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/countersign/countersign/kvstate"
)

// Hub wakes long-polls. One watcher per process (the request mirror's)
// feeds it; each waiter is a buffered channel in a map, so a held poll
// costs a goroutine and a few hundred bytes, and no NATS consumer.
type Hub struct {
	max     int64 // held waits allowed at once
	mu      sync.Mutex
	waiters map[string][]chan *kvstate.Record // most keys have one: a slice, where a set cost a map a poll
	closed  bool
	n       atomic.Int64
}

// NewHub returns an empty hub that holds at most max waits at once.
func NewHub(max int) *Hub {
	return &Hub{max: int64(max), waiters: map[string][]chan *kvstate.Record{}}
}

// Subscribe returns a channel that receives key's record when it becomes
// terminal (or is closed when the hub shuts down), and a cancel func that
// the caller must call. It returns ErrRateLimited when the hub is full.
func (h *Hub) Subscribe(key string) (<-chan *kvstate.Record, func(), error) {
	ch := make(chan *kvstate.Record, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return ch, func() {}, nil
	}
	if h.n.Load() >= h.max {
		return nil, nil, ErrRateLimited
	}
	h.waiters[key] = append(h.waiters[key], ch)
	h.n.Add(1)
	return ch, func() { h.remove(key, ch) }, nil
}

func (h *Hub) remove(key string, ch chan *kvstate.Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.waiters[key]
	i := slices.Index(set, ch)
	if i < 0 {
		return // woken by Close, or removed already
	}
	if len(set) == 1 {
		delete(h.waiters, key)
	} else {
		set[i] = set[len(set)-1]
		set[len(set)-1] = nil
		h.waiters[key] = set[:len(set)-1]
	}
	h.n.Add(-1)
}

// Observe is the request mirror's OnChange hook: a terminal record wakes
// its waiters.
func (h *Hub) Observe(key string, r kvstate.Record, deleted bool) {
	if deleted || !r.Status.Terminal() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.waiters[key]
	if len(set) == 0 {
		return
	}
	woken := new(kvstate.Record) // only for waiters: r itself stays off the heap
	*woken = r
	for _, ch := range set {
		select {
		case ch <- woken:
		default:
		}
	}
}

// Waiting returns the number of held waits.
func (h *Hub) Waiting() int64 { return h.n.Load() }

// Close wakes every waiter (their channels close) and refuses new ones:
// used at shutdown so held polls answer at once.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for key, set := range h.waiters {
		for _, ch := range set {
			close(ch)
		}
		delete(h.waiters, key)
	}
	h.n.Store(0)
}
