package kvstate

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Mirror keeps the latest value of every key of one bucket in memory, fed by
// one watcher, with secondary indexes. Writers in this process call Apply
// right after a write so that they read their own writes at once; the
// watcher brings every other process's writes a moment later. A revision
// never goes backwards.
type Mirror[T any] struct {
	kv      jetstream.KeyValue
	index   func(T) []string
	changed []func(key string, v T, deleted bool)

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

// NewMirror mirrors the bucket kv; index (may be nil) names the index keys
// of a value.
func NewMirror[T any](kv jetstream.KeyValue, index func(T) []string) *Mirror[T] {
	return &Mirror[T]{kv: kv, index: index, items: map[string]mirrored[T]{},
		byIdx: map[string]map[string]struct{}{}, ready: make(chan struct{})}
}

// OnChange registers fn to be called (from the watcher goroutine or from
// Apply) for every new revision. Register before Run.
func (m *Mirror[T]) OnChange(fn func(key string, v T, deleted bool)) {
	m.changed = append(m.changed, fn)
}

// Ready is closed once the mirror holds every key that existed at start.
func (m *Mirror[T]) Ready() <-chan struct{} { return m.ready }

// Run watches the bucket until ctx ends; it returns nil then, or the error
// that stopped the watch.
func (m *Mirror[T]) Run(ctx context.Context) error {
	w, err := m.kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("kvstate: watch %s: %w", m.kv.Bucket(), mapErr(err))
	}
	defer w.Stop()
	readyOnce := sync.OnceFunc(func() { close(m.ready) })
	defer readyOnce()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return nil
			}
			if e == nil {
				readyOnce()
				continue
			}
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
