package kvstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Mirror keeps the latest value of every key of one bucket in memory, fed by
// one watcher, with secondary indexes. Writers in this process call Apply
// right after a write so that they read their own writes at once; the
// watcher brings every other process's writes a moment later. A revision
// never goes backwards.
//
// The watcher survives NATS restarts: Restart (called when the connection
// comes back) or a watch that ends replaces it with a new one that resumes
// right after the last revision it delivered, so no write is missed and
// nothing waits for the old watcher's heartbeats to lapse.
type Mirror[T any] struct {
	kv      jetstream.KeyValue
	index   func(T) []string
	changed []func(key string, v T, deleted bool)
	restart chan struct{}
	current atomic.Bool // the watcher has delivered everything stored when it (re)started

	mu    sync.RWMutex
	items map[string]mirrored[T]
	byIdx map[string]map[string]struct{}
	ready chan struct{}
}

type mirrored[T any] struct {
	v   T
	rev uint64
	ix  []string
}

// errRestart ends a watch that Restart replaces.
var errRestart = errors.New("kvstate: watcher restart")

// watchRetry bounds the wait between attempts to start a watcher again.
const watchRetry = time.Second

// NewMirror mirrors the bucket kv; index (may be nil) names the index keys
// of a value.
func NewMirror[T any](kv jetstream.KeyValue, index func(T) []string) *Mirror[T] {
	return &Mirror[T]{kv: kv, index: index, items: map[string]mirrored[T]{}, restart: make(chan struct{}, 1),
		byIdx: map[string]map[string]struct{}{}, ready: make(chan struct{})}
}

// OnChange registers fn to be called (from the watcher goroutine or from
// Apply) for every new revision. Register before Run.
func (m *Mirror[T]) OnChange(fn func(key string, v T, deleted bool)) {
	m.changed = append(m.changed, fn)
}

// Ready is closed once the mirror holds every key that existed at start.
func (m *Mirror[T]) Ready() <-chan struct{} { return m.ready }

// Current reports whether the watcher is live and has delivered every
// write stored when it last (re)started. It is false from Stale (the
// connection dropped) until a new watcher has caught up.
func (m *Mirror[T]) Current() bool { return m.current.Load() }

// Stale marks the mirror as not current (the connection dropped).
func (m *Mirror[T]) Stale() { m.current.Store(false) }

// Restart replaces the watcher with one that resumes after the last
// revision delivered (after a reconnect, the old one may be bound to a
// consumer the server no longer has).
func (m *Mirror[T]) Restart() {
	m.current.Store(false)
	select {
	case m.restart <- struct{}{}:
	default:
	}
}

// Run watches the bucket until ctx ends; it returns nil then, or the error
// that stopped the first watch before it caught up. Later failures start a
// new watcher, resuming after the last revision delivered.
func (m *Mirror[T]) Run(ctx context.Context) error {
	readyOnce := sync.OnceFunc(func() { close(m.ready) })
	defer readyOnce()
	var next uint64 // the stream sequence to resume from; 0: every current value
	wait := 50 * time.Millisecond
	for {
		err := m.watch(ctx, &next, readyOnce)
		if ctx.Err() != nil {
			return nil
		}
		m.current.Store(false)
		if errors.Is(err, errRestart) {
			wait = 50 * time.Millisecond
			continue
		}
		select {
		case <-m.ready:
		default:
			return err // the first watch failed: the process cannot start
		}
		select {
		case <-ctx.Done():
			return nil
		case <-m.restart:
		case <-time.After(wait):
		}
		wait = min(2*wait, watchRetry)
	}
}

// watch runs one watcher from *next, advancing *next past each revision.
func (m *Mirror[T]) watch(ctx context.Context, next *uint64, ready func()) error {
	var opts []jetstream.WatchOpt
	if *next > 0 {
		opts = append(opts, jetstream.ResumeFromRevision(*next))
	}
	w, err := m.kv.WatchAll(ctx, opts...)
	if err != nil {
		return fmt.Errorf("kvstate: watch %s: %w", m.kv.Bucket(), mapErr(err))
	}
	defer func() { go func() { _ = w.Stop() }() }() // may wait on a server that is gone
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.restart:
			return errRestart
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("kvstate: watch %s ended", m.kv.Bucket())
			}
			if e == nil {
				m.current.Store(true)
				ready()
				continue
			}
			*next = e.Revision() + 1
			m.take(e)
		}
	}
}

func (m *Mirror[T]) take(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		m.remove(e.Key(), e.Revision())
		return
	}
	var v T
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return // not ours to judge; readers of the key itself will fail closed
	}
	if s, ok := any(&v).(interface{ setMeta(uint64, time.Time) }); ok {
		s.setMeta(e.Revision(), e.Created())
	}
	m.Apply(e.Key(), v, e.Revision())
}

// Apply records v as key's value at revision rev unless a later revision is
// already held.
func (m *Mirror[T]) Apply(key string, v T, rev uint64) {
	var ix []string
	if m.index != nil {
		ix = m.index(v)
	}
	m.mu.Lock()
	old, had := m.items[key]
	if had && old.rev >= rev {
		m.mu.Unlock()
		return
	}
	m.unindex(key, old.ix)
	m.items[key] = mirrored[T]{v: v, rev: rev, ix: ix}
	for _, k := range ix {
		if m.byIdx[k] == nil {
			m.byIdx[k] = map[string]struct{}{}
		}
		m.byIdx[k][key] = struct{}{}
	}
	m.mu.Unlock()
	for _, fn := range m.changed {
		fn(key, v, false)
	}
}

func (m *Mirror[T]) remove(key string, rev uint64) {
	m.mu.Lock()
	old, had := m.items[key]
	if !had || old.rev >= rev {
		m.mu.Unlock()
		return
	}
	m.unindex(key, old.ix)
	delete(m.items, key)
	m.mu.Unlock()
	for _, fn := range m.changed {
		fn(key, old.v, true)
	}
}

func (m *Mirror[T]) unindex(key string, ix []string) {
	for _, k := range ix {
		delete(m.byIdx[k], key)
		if len(m.byIdx[k]) == 0 {
			delete(m.byIdx, k)
		}
	}
}

// Get returns key's value.
func (m *Mirror[T]) Get(key string) (T, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	it, ok := m.items[key]
	return it.v, ok
}

// GetPtr returns a copy of key's value on the heap.
func (m *Mirror[T]) GetPtr(key string) (*T, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	it, ok := m.items[key]
	if !ok {
		return nil, false
	}
	v := it.v
	return &v, true
}

// ByIndex returns the values whose index keys include ix.
func (m *Mirror[T]) ByIndex(ix string) []T {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]T, 0, len(m.byIdx[ix]))
	for key := range m.byIdx[ix] {
		out = append(out, m.items[key].v)
	}
	return out
}

// Len returns the number of keys held.
func (m *Mirror[T]) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.items)
}

// Forget drops key at once (after this process deleted it); the watcher's
// delete marker confirms it later.
func (m *Mirror[T]) Forget(key string) {
	m.mu.Lock()
	old, had := m.items[key]
	if had {
		m.unindex(key, old.ix)
		delete(m.items, key)
	}
	m.mu.Unlock()
}

// Each calls fn for every key held (under the read lock: fn must not call
// back into the mirror).
func (m *Mirror[T]) Each(fn func(key string, v T)) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for k, it := range m.items {
		fn(k, it.v)
	}
}
