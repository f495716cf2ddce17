package views

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views/pack"
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
//
// A mirror built with a summary (the requests') holds in full only the
// values the summary calls hot; of the others it holds their summary and
// index keys, and readers fetch them from the bucket. Each index keeps
// its keys sorted, for paging. A value held in full with a Trim method
// (a kvstate.Record) is held trimmed: a request without its large
// arguments, which OnChange is still told whole.
type Mirror[T any] struct {
	kv      jetstream.KeyValue
	index   func(T) []string
	changed atomic.Pointer[[]func(key string, v T, deleted bool)] // copied on OnChange
	hooksMu sync.Mutex                                            // serializes OnChange
	restart chan struct{}
	current atomic.Bool // the watcher has delivered everything stored when it (re)started
	// summarize (may be nil: every value hot) returns a value's summary
	// and whether it is held in full; peek reads the summary and index
	// keys of a stored value that is not, without decoding it whole (ok
	// false: decode it).
	summarize func(*T) (Summary, bool)
	peek      func(data []byte) (s Summary, ix []string, ok bool)
	// packer (may be nil: none) packs the values not held in full
	// (views/pack), from their stored bytes, or, from a writer in this
	// process, from stored(v); packID names its fixed dictionary text, for
	// snapshots.
	packer *pack.Packer
	stored func(v *T) []byte
	packID uint64

	// resume (may be nil) runs before the first watch: it may fill the
	// mirror from a snapshot, and returns the sequence to watch from (0:
	// every current value).
	resume func(ctx context.Context) uint64
	// last and lastAt are the revision the watcher delivered last and its
	// store time (Unix ns), for snapshots.
	last   atomic.Uint64
	lastAt atomic.Int64

	failed error // why Run ended before it caught up; written before ready closes

	// writing holds the keys this process is writing (Expect), and the
	// entries the watcher delivered for them meanwhile; stashed counts
	// those entries' revisions, which a snapshot may not claim yet.
	wmu     sync.Mutex
	writing map[string]*inWrite
	stashed map[uint64]int

	mu    sync.RWMutex
	items map[string]mirrored[T]
	byIdx map[string]*keyset
	ready chan struct{}
	// names numbers the summaries' strings (agents and statuses: a
	// handful, shared by a million records); names[0] is "".
	names   []string
	nameNum map[string]uint32
}

// Summary is what a mirror holds of a value it does not hold in full.
type Summary struct {
	Agent    string
	Status   string
	Revision uint64
}

// mirrored is what a mirror holds of one key. It is kept small, for a
// million of them: the summary's strings are numbers of m.names, and the
// index keys are not held but computed again when the value changes, from
// the value held in full or from the packed bytes (ixOf). A mirror with a
// summary and a packer packs every value it does not hold in full (v and
// z are never both nil); one without a packer holds every value in full.
type mirrored[T any] struct {
	v      *T     // held in full (nil: held as its summary)
	z      []byte // packed (nil: held in full)
	rev    uint64
	srev   uint64 // the summary's revision
	agent  uint32 // the summary's agent and status: numbers of m.names
	status uint32
}

// inWrite is a key being written in this process: its writers, and the
// watcher's entries for it they apply when they are done.
type inWrite struct {
	writers int
	stash   []jetstream.KeyValueEntry
}

// Expect tells the mirror that this process is about to write key and
// then Apply what it wrote; done, called once the write and the Apply are
// over (or the write failed), applies what the watcher delivered for the
// key meanwhile that the Apply did not hold already. The watcher then
// does not decode a write of this process (the stored JSON of a record),
// which its writer applies from the value it has: it usually delivers the
// write before the writer, woken by the acknowledgement, could apply it.
// Nothing is lost: an entry stashed for a write that failed, or for
// another process's write to the same key, is applied by done.
func (m *Mirror[T]) Expect(key string) (done func()) {
	m.wmu.Lock()
	w := m.writing[key]
	if w == nil {
		w = &inWrite{}
		m.writing[key] = w
	}
	w.writers++
	m.wmu.Unlock()
	return func() {
		m.wmu.Lock()
		stash := w.stash
		w.stash = nil
		if w.writers--; w.writers == 0 {
			delete(m.writing, key)
		}
		m.wmu.Unlock()
		if len(stash) == 0 {
			return
		}
		for _, e := range stash {
			m.take(e, false) // skipped when the writer's Apply holds it
		}
		m.wmu.Lock()
		for _, e := range stash { // applied: a snapshot may claim them
			if m.stashed[e.Revision()]--; m.stashed[e.Revision()] <= 0 {
				delete(m.stashed, e.Revision())
			}
		}
		m.wmu.Unlock()
	}
}

// stash keeps e for the writers of its key, when it is being written.
func (m *Mirror[T]) stash(e jetstream.KeyValueEntry) bool {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	w := m.writing[e.Key()]
	if w == nil {
		return false
	}
	w.stash = append(w.stash, e)
	m.stashed[e.Revision()]++
	return true
}

// claimable returns the latest revision a snapshot may claim to hold
// every write up to: the last delivered, unless a stashed entry before it
// is not applied yet. Read last before the stash: an entry is counted
// as stashed before last moves past it, and uncounted only once applied.
func (m *Mirror[T]) claimable() uint64 {
	last := m.last.Load()
	m.wmu.Lock()
	defer m.wmu.Unlock()
	for rev := range m.stashed {
		if rev <= last {
			last = rev - 1
		}
	}
	return last
}

// errRestart ends a watch that Restart replaces.
var errRestart = errors.New("views: watcher restart")

// watchRetry bounds the wait between attempts to start a watcher again.
const watchRetry = time.Second

// NewMirror mirrors the bucket kv; index (may be nil) names the index keys
// of a value.
func NewMirror[T any](kv jetstream.KeyValue, index func(T) []string) *Mirror[T] {
	return &Mirror[T]{kv: kv, index: index, items: map[string]mirrored[T]{}, restart: make(chan struct{}, 1),
		byIdx: map[string]*keyset{}, ready: make(chan struct{}), writing: map[string]*inWrite{}, stashed: map[uint64]int{}, names: []string{""}, nameNum: map[string]uint32{"": 0}}
}

// OnChange registers fn to be called (from the watcher goroutine or from
// Apply) for every revision applied from then on. The workers that watch
// the mirror register while they are built, before Run (internal/app);
// a hook added to a running mirror (a test's service on running views) is
// safe and is told only of later revisions.
func (m *Mirror[T]) OnChange(fn func(key string, v T, deleted bool)) {
	m.hooksMu.Lock()
	defer m.hooksMu.Unlock()
	var hooks []func(string, T, bool)
	if old := m.changed.Load(); old != nil {
		hooks = slices.Clone(*old)
	}
	hooks = append(hooks, fn)
	m.changed.Store(&hooks)
}

// hooks is what OnChange registered.
func (m *Mirror[T]) hooks() []func(key string, v T, deleted bool) {
	if h := m.changed.Load(); h != nil {
		return *h
	}
	return nil
}

// Ready is closed once the mirror holds every key that existed at start,
// or once Run ended without (then Err says why).
func (m *Mirror[T]) Ready() <-chan struct{} { return m.ready }

// Err is why Run ended before the mirror caught up (nil: it did, or Ready
// is not closed yet).
func (m *Mirror[T]) Err() error {
	select {
	case <-m.ready:
		return m.failed
	default:
		return nil
	}
}

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
func (m *Mirror[T]) Run(ctx context.Context) (err error) {
	caughtUp := false
	readyOnce := sync.OnceFunc(func() { caughtUp = true; close(m.ready) })
	defer func() {
		if !caughtUp { // Ready closes, and Err says why the mirror is not
			m.failed = cmp.Or(err, ctx.Err(), errors.New("views: mirror stopped"))
			close(m.ready)
		}
	}()
	var next uint64 // the stream sequence to resume from; 0: every current value
	if m.resume != nil {
		next = m.resume(ctx)
	}
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
		return fmt.Errorf("views: watch %s: %w", m.kv.Bucket(), kvstate.MapErr(err))
	}
	defer func() { go func() { _ = w.Stop() }() }() // may wait on a server that is gone
	replay := *next == 0                            // the first watch, delivering the values stored at start
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.restart:
			return errRestart
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("views: watch %s ended", m.kv.Bucket())
			}
			if e == nil {
				m.current.Store(true)
				replay = false
				ready()
				continue
			}
			*next = e.Revision() + 1
			m.take(e, replay)
			m.last.Store(e.Revision()) // after take: a snapshot holds every write up to last
			m.lastAt.Store(e.Created().UnixNano())
		}
	}
}

// take applies one entry the watcher delivered. An entry at or below the
// revision held is not decoded at all: it is this process's own write,
// applied already, coming back. While the first watch replays the stored
// values (replay), a value the mirror will not hold in full is only
// peeked at, and OnChange is not called for it.
func (m *Mirror[T]) take(e jetstream.KeyValueEntry, replay bool) {
	key, rev := e.Key(), e.Revision()
	if m.holds(key, rev) {
		return
	}
	if !replay && m.stash(e) {
		return // this process is writing key: its writer applies it (Expect)
	}
	if e.Operation() != jetstream.KeyValuePut {
		m.remove(key, rev)
		return
	}
	if replay && m.peek != nil && m.packer != nil {
		if s, ix, ok := m.peek(e.Value()); ok {
			z, release := m.packer.Pack(e.Value())
			m.store(key, mirrored[T]{rev: rev, z: z}, s, ix)
			release()
			return
		}
	}
	var v T
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return // not ours to judge; readers of the key itself will fail closed
	}
	if s, ok := any(&v).(interface{ SetMeta(uint64, time.Time) }); ok {
		s.SetMeta(rev, e.Created())
	}
	m.apply(key, &v, rev, e.Value())
}

// Apply records v as key's value at revision rev unless a later revision is
// already held.
func (m *Mirror[T]) Apply(key string, v T, rev uint64) { m.apply(key, &v, rev, nil) }

// apply is Apply with v's stored bytes, when the caller has them. The
// mirror holds *v itself in full, unless Trim would change it: nothing
// else may write *v (a copy would cost a pending request's record twice
// over while the submits run, and leave the heap's pages partly used).
func (m *Mirror[T]) apply(key string, v *T, rev uint64, raw []byte) {
	if m.holds(key, rev) {
		// Held already: the watcher often delivers a write before its
		// writer, woken by the acknowledgement, applies it. Checked before
		// the indexing and packing, which would be done for nothing.
		return
	}
	it := mirrored[T]{rev: rev}
	var ix []string
	if m.index != nil {
		ix = internAll(m.index(*v))
	}
	var sum Summary
	hot := true
	if m.summarize != nil {
		sum, hot = m.summarize(v)
	}
	if !hot && m.packer != nil {
		if raw == nil {
			raw = m.stored(v)
		}
		var release func()
		it.z, release = m.packer.Pack(raw)
		defer release()
	} else {
		if d, ok := any(v).(interface{ DropStored() }); ok {
			d.DropStored() // held in full: its bytes are not needed
		}
		it.v = v
		if t, ok := any(v).(trimmer); ok && t.Trims() {
			held := *v                  // OnChange is told v whole
			any(&held).(trimmer).Trim() // large arguments stay in the bucket
			it.v = &held
		}
	}
	if !m.store(key, it, sum, ix) {
		return
	}
	for _, fn := range m.hooks() {
		fn(key, *v, false)
	}
}

// trimmer is a value a mirror holds without its large parts (a
// kvstate.Record without its large arguments).
type trimmer interface {
	Trims() bool // Trim would change the value
	Trim()
}

// holds reports whether key's revision rev, or a later one, is held.
func (m *Mirror[T]) holds(key string, rev uint64) bool {
	m.mu.RLock()
	old, had := m.items[key]
	m.mu.RUnlock()
	return had && old.rev >= rev
}

// store holds it, with its summary sum and index keys ix, as key's value
// unless a later revision is held already, and reports whether it did.
// it.z is the packer's scratch: store keeps a copy.
func (m *Mirror[T]) store(key string, it mirrored[T], sum Summary, ix []string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, had := m.items[key]
	if had && old.rev >= it.rev {
		return false
	}
	if had {
		m.unindex(key, m.ixOf(old))
	}
	if it.z != nil {
		it.z = m.packer.Keep(it.z) // only now: a value that loses here leaves nothing behind
	}
	m.indexLocked(key, ix)
	m.setSummary(&it, sum)
	m.items[key] = it
	return true
}

// setSummary numbers sum's strings into it; m.mu is held for writing.
func (m *Mirror[T]) setSummary(it *mirrored[T], sum Summary) {
	it.agent, it.status, it.srev = m.num(sum.Agent), m.num(sum.Status), sum.Revision
}

// num returns s's number in m.names, adding it; m.mu is held for writing.
func (m *Mirror[T]) num(s string) uint32 {
	n, ok := m.nameNum[s]
	if !ok {
		n = uint32(len(m.names))
		m.names = append(m.names, s)
		m.nameNum[s] = n
	}
	return n
}

// summary returns the summary of it; m.mu is held.
func (m *Mirror[T]) summary(it mirrored[T]) Summary {
	return Summary{Agent: m.names[it.agent], Status: m.names[it.status], Revision: it.srev}
}

// ixOf returns the index keys of it, which are not held (to save memory):
// computed from the value held in full, or read from its packed bytes.
func (m *Mirror[T]) ixOf(it mirrored[T]) []string {
	switch {
	case m.index == nil:
		return nil
	case it.v != nil:
		return m.index(*it.v)
	case it.z != nil:
		buf := unpackScratch.Get().(*[]byte)
		defer unpackScratch.Put(buf)
		raw, err := m.packer.UnpackInto(*buf, it.z)
		if err != nil {
			return nil
		}
		*buf = raw
		_, ix, _ := m.peek(raw) // copies what it keeps
		return ix
	}
	return nil
}

// indexLocked adds key to the indexes ix; m.mu is held.
func (m *Mirror[T]) indexLocked(key string, ix []string) {
	for _, k := range ix {
		set := m.byIdx[k]
		if set == nil {
			set = &keyset{}
			m.byIdx[k] = set
		}
		set.add(key)
	}
}

func (m *Mirror[T]) remove(key string, rev uint64) {
	m.mu.Lock()
	old, had := m.items[key]
	if !had || old.rev >= rev {
		m.mu.Unlock()
		return
	}
	m.unindex(key, m.ixOf(old))
	delete(m.items, key)
	m.mu.Unlock()
	var v T
	if old.v != nil {
		v = *old.v
	}
	for _, fn := range m.hooks() {
		fn(key, v, true)
	}
}

func (m *Mirror[T]) unindex(key string, ix []string) {
	for _, k := range ix {
		set := m.byIdx[k]
		if set == nil {
			continue
		}
		set.remove(key)
		if set.n == 0 {
			delete(m.byIdx, k)
		}
	}
}

// Get returns key's value, if it is held in full.
func (m *Mirror[T]) Get(key string) (T, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	it, ok := m.items[key]
	if !ok || it.v == nil {
		var zero T
		return zero, false
	}
	return *it.v, true
}

// GetPtr returns a copy of key's value on the heap, if it is held in full.
func (m *Mirror[T]) GetPtr(key string) (*T, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	it, ok := m.items[key]
	if !ok || it.v == nil {
		return nil, false
	}
	v := *it.v
	return &v, true
}

// Packed returns key's value as packed and its KV revision, if it is held
// packed (not in full). The bytes are never changed: a caller may keep
// them.
func (m *Mirror[T]) Packed(key string) ([]byte, uint64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	it, ok := m.items[key]
	if !ok || it.z == nil {
		return nil, 0, false
	}
	return it.z, it.rev, true
}

// Held returns the summary and KV revision of key's value, whether or not
// it is held in full (a mirror without a summary returns an empty one).
func (m *Mirror[T]) Held(key string) (Summary, uint64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	it, ok := m.items[key]
	return m.summary(it), it.rev, ok
}

// ByIndex returns the values held in full whose index keys include ix, in
// key order.
func (m *Mirror[T]) ByIndex(ix string) []T {
	var out []T
	m.Scan(ix, "", func(_ string, _ Summary, _ uint64, v *T) bool {
		if v != nil {
			out = append(out, *v)
		}
		return true
	})
	return out
}

// Scan calls fn, in key order from after ("": the first), with each key
// whose index keys include ix, its summary, its KV revision and its value
// (nil when it is not held in full), until fn returns false. fn runs under the read lock:
// it must not call back into the mirror.
func (m *Mirror[T]) Scan(ix, after string, fn func(key string, s Summary, rev uint64, v *T) bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	set := m.byIdx[ix]
	if set == nil {
		return
	}
	set.ascend(after, func(k string) bool {
		it := m.items[k]
		return fn(k, m.summary(it), it.rev, it.v)
	})
}

// Count returns the number of keys whose index keys include ix.
func (m *Mirror[T]) Count(ix string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if set := m.byIdx[ix]; set != nil {
		return set.n
	}
	return 0
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
		m.unindex(key, m.ixOf(old))
		delete(m.items, key)
	}
	m.mu.Unlock()
}

// Each calls fn for every value held in full (under the read lock: fn must
// not call back into the mirror).
func (m *Mirror[T]) Each(fn func(key string, v T)) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for k, it := range m.items {
		if it.v != nil {
			fn(k, *it.v)
		}
	}
}

// interned holds one copy of each index key: a million records share a
// handful of them.
var interned sync.Map

func internAll(ix []string) []string {
	for i, k := range ix {
		ix[i] = intern(k)
	}
	return ix
}

// peekedTexts holds one copy of each short text peeked from stored
// records (tenants, agents, statuses, deciders), found by bytes without
// allocating. It grows with the principals a deployment has, and stops
// taking new texts at maxPeekedTexts.
var peekedTexts = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const maxPeekedTexts = 1 << 16

// internBytes returns b as a string, the one copy peekedTexts holds.
func internBytes(b []byte) string {
	peekedTexts.RLock()
	s, ok := peekedTexts.m[string(b)]
	peekedTexts.RUnlock()
	if ok {
		return s
	}
	s = string(b)
	peekedTexts.Lock()
	if len(peekedTexts.m) < maxPeekedTexts {
		peekedTexts.m[s] = s
	}
	peekedTexts.Unlock()
	return s
}

func intern(s string) string {
	if v, ok := interned.Load(s); ok {
		return v.(string)
	}
	v, _ := interned.LoadOrStore(s, s)
	return v.(string)
}
