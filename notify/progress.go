package notify

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
)

// progress is what one feed has done, as stored in the bucket: every
// write read at or below Floor is done (delivered, dropped or not wanted),
// and so are the writes in Done above it. A restart reads again from
// Floor+1 and skips Done.
type progress struct {
	Floor uint64   `json:"floor"`
	Done  []uint64 `json:"done,omitempty"`
}

// tracker keeps a feed's progress as its items finish out of order.
type tracker struct {
	mu       sync.Mutex
	floor    uint64
	lastRead uint64
	open     []uint64 // read and not done, ascending (reads are in order)
	done     map[uint64]bool
	skip     map[uint64]bool // done before a restart
}

func newTracker(p progress) *tracker {
	t := &tracker{floor: p.Floor, lastRead: p.Floor, done: map[uint64]bool{}, skip: map[uint64]bool{}}
	for _, s := range p.Done {
		t.skip[s] = true
	}
	return t
}

// read records that seq was read; it reports false when seq was done
// before a restart (then it is done again at once).
func (t *tracker) read(seq uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastRead = seq
	if t.skip[seq] {
		delete(t.skip, seq)
		t.finish(seq)
		return false
	}
	t.open = append(t.open, seq)
	return true
}

// markDone records that seq, read earlier, is done.
func (t *tracker) markDone(seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := slices.BinarySearch(t.open, seq); ok {
		t.open = slices.Delete(t.open, i, i+1)
	}
	t.finish(seq)
}

// finish moves the floor up to just below the oldest open write.
func (t *tracker) finish(seq uint64) {
	t.done[seq] = true
	t.floor = t.lastRead
	if len(t.open) > 0 {
		t.floor = t.open[0] - 1
	}
	for s := range t.done {
		if s <= t.floor {
			delete(t.done, s)
		}
	}
}

// snapshot encodes the progress to store.
func (t *tracker) snapshot() []byte {
	t.mu.Lock()
	p := progress{Floor: t.floor}
	for s := range t.done {
		p.Done = append(p.Done, s)
	}
	for s := range t.skip { // not read again yet: still done
		p.Done = append(p.Done, s)
	}
	t.mu.Unlock()
	slices.Sort(p.Done)
	b, _ := json.Marshal(p)
	return b
}

// saver runs save after changes, one at a time, until ctx ends; the
// returned func signals a change (signals while a save runs coalesce
// into one more save). Webhook and email feeds store their progress so.
func saver(ctx context.Context, wg *sync.WaitGroup, save func(context.Context)) func() {
	dirty := make(chan struct{}, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-dirty:
				save(ctx)
			}
		}
	}()
	return func() {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
}
