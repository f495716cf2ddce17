package views

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views/snapshot"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// A mirror snapshot lets a process start without replaying every stored
// request: it holds what the mirror held at a stream sequence S (each
// key's summary, index keys and packed value, or only its name when the
// value was held in full), with the packing's sample, and the watcher
// resumes at S+1. At a million requests the replay takes about 20 s; from
// a snapshot, a start takes about 5 s (bench --scenario fill --requests
// 1000000).
//
// A snapshot is a cache. It is written to the object store bucket
// kvstate.SnapshotBucket when a process stops and every SnapshotEvery, and a
// process that finds none, or one it cannot trust, replays the bucket as
// before. It is trusted only when it was taken from the same stream (its
// creation time), the stream has not gone back behind S, and, when the
// stream was written after S, write S is younger than the removal
// markers' TTL less a margin: a request removed after S is seen as its
// purge marker, which must still be there.
//
// Each key's state in a snapshot is at least as new as at S, never older:
// S is read before the keys, and a mirror's values only move forward. The
// re-delivered writes after S are then either already held (skipped by
// revision) or newer.

// SnapshotEvery is how often a running process writes its snapshot (when
// its mirror moved since the last one).
const SnapshotEvery = 10 * time.Minute

// snapshotMaxAge bounds the age of the last write a snapshot holds: the
// purge markers of removals after it must not have expired yet.
const snapshotMaxAge = kvstate.PurgeMarkerTTL - time.Hour

// encodeSnapshot writes the mirror's state as a snapshot of a stream
// created at created, complete up to sequence seq, in parts of about
// partSize bytes, each handed to emit (which may keep it only until it
// returns); seq 0 and no part when the mirror has delivered nothing yet.
// Keys go in sorted order (loading then appends to the sorted indexes).
// The read lock is held for a chunk of keys at a time, never for all.
// The entry count goes last, after the entries (keys removed meanwhile
// are left out).
func (m *Mirror[T]) encodeSnapshot(created time.Time, partSize int, emit func([]byte) error) (seq uint64, err error) {
	seq, at := m.claimable(), m.lastAt.Load() // before any key is read
	if seq == 0 {
		return 0, nil
	}
	m.mu.RLock()
	keys := make([]string, 0, len(m.items))
	for k := range m.items {
		keys = append(keys, k)
	}
	m.mu.RUnlock()
	slices.Sort(keys)
	var sample []byte
	if m.packer != nil {
		sample = m.packer.Sample()
	}
	// A part ends after the entry that reaches partSize: room for it, so
	// that the last entry does not grow (and copy) the whole buffer.
	e := snapshot.NewEncoder(snapshot.Head{Created: created, Seq: seq, At: time.Unix(0, at), PackID: m.packID, Sample: sample},
		min(partSize, 200*len(keys))+64<<10)
	var count uint64
	const chunk = 4096
	for i := 0; i < len(keys); {
		m.mu.RLock()
		for end := min(i+chunk, len(keys)); i < end && e.Len() < partSize; i++ {
			k := keys[i]
			it, ok := m.items[k]
			if !ok {
				continue
			}
			count++
			e.Str(k)
			e.Uvarint(it.rev)
			if it.v != nil {
				e.Byte(1) // held in full: loaded from the bucket
				continue
			}
			e.Byte(0)
			sum := m.summary(it)
			e.Ref(sum.Agent)
			e.Ref(sum.Status)
			e.Uvarint(sum.Revision)
			ix := m.ixOf(it)
			e.Uvarint(uint64(len(ix)))
			for _, x := range ix {
				e.Ref(x)
			}
			e.Bytes(it.z)
		}
		m.mu.RUnlock()
		if e.Len() >= partSize {
			if err := e.Flush(emit); err != nil {
				return 0, err
			}
		}
	}
	// A packer that completed its sample meanwhile may have packed values
	// with it that this snapshot, which does not carry it, could not
	// unpack: save again later.
	if m.packer != nil && len(sample) == 0 && len(m.packer.Sample()) > 0 {
		return 0, errors.New("views: the packer's sample was completed during the snapshot; saving again later")
	}
	return seq, e.End(count, emit)
}

// loadSnapshot fills an empty mirror from data and returns the sequence
// to resume the watcher from (S+1), or an error and an empty mirror. The
// values the snapshot names as held in full are read from the bucket (with
// OnChange, as a replay delivers them).
func (m *Mirror[T]) loadSnapshot(ctx context.Context, data []byte, s snapshot.Stream, now time.Time) (uint64, error) {
	h, d, err := snapshot.Decode(data, intern)
	if err != nil {
		return 0, err
	}
	if err := h.Usable(s, now, snapshotMaxAge); err != nil {
		return 0, err
	}
	if h.PackID != m.packID {
		return 0, fmt.Errorf("%w: packed another way (%x, this process %x)", snapshot.ErrUnreadable, h.PackID, m.packID)
	}
	if len(h.Sample) > 0 && (m.packer == nil || !m.packer.Adopt(h.Sample)) {
		return 0, fmt.Errorf("%w: packed with a sample this process does not have", snapshot.ErrUnreadable)
	}
	m.mu.Lock()
	m.items = make(map[string]mirrored[T], h.Count)
	var hot, ix []string
	for range h.Count {
		if d.Err() != nil {
			break
		}
		key := d.Str()
		it := mirrored[T]{rev: d.Uvarint()}
		if d.Byte() == 1 {
			hot = append(hot, key)
			continue
		}
		var sum Summary
		sum.Agent, sum.Status = d.Ref(), d.Ref()
		sum.Revision = d.Uvarint()
		n := d.Uvarint()
		if n > uint64(d.Left()) {
			d.Fail()
		}
		if d.Err() != nil {
			break
		}
		ix = ix[:0]
		for range n {
			ix = append(ix, d.Ref())
		}
		if it.z = d.Bytes(); len(it.z) == 0 {
			d.Fail() // a value not held in full is packed
		}
		if d.Err() != nil {
			break
		}
		m.indexLocked(key, ix)
		m.setSummary(&it, sum)
		m.items[key] = it
	}
	if d.Err() == nil && d.Left() != 0 {
		d.Fail()
	}
	if d.Err() != nil {
		m.items, m.byIdx = map[string]mirrored[T]{}, map[string]*keyset{}
		m.mu.Unlock()
		return 0, d.Err()
	}
	m.mu.Unlock()
	if err := m.fetch(ctx, hot); err != nil {
		m.mu.Lock()
		m.items, m.byIdx = map[string]mirrored[T]{}, map[string]*keyset{}
		m.mu.Unlock()
		return 0, err
	}
	m.last.Store(h.Seq)
	m.lastAt.Store(h.At.UnixNano())
	return h.Seq + 1, nil
}

// fetch reads keys' current values from the bucket into the mirror.
func (m *Mirror[T]) fetch(ctx context.Context, keys []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, k := range keys {
		g.Go(func() error {
			e, err := m.kv.Get(ctx, k)
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				return nil // removed since: its marker comes with the writes after S
			}
			if err != nil {
				return err
			}
			m.take(e, false)
			return nil
		})
	}
	return g.Wait()
}

// Snapshots writes and reads a mirror's snapshots in an object store.
type Snapshots[T any] struct {
	mirror *Mirror[T]
	store  *snapshot.Store
	stream jetstream.Stream
	now    func() time.Time
	log    func(msg string, args ...any)
	saved  atomic.Uint64 // the last sequence saved
	// partSize is the size of a part (snapshotPart; smaller in tests).
	partSize int
	// resumed is the sequence the last Resume had the watcher start from
	// (0: a replay of everything).
	resumed atomic.Uint64
}

// state returns the stream's state, which a snapshot is checked against.
func (s *Snapshots[T]) state(ctx context.Context) (snapshot.Stream, error) {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return snapshot.Stream{}, err
	}
	return snapshot.Stream{Created: info.Created, LastSeq: info.State.LastSeq}, nil
}

// Resume loads the snapshot into the (empty) mirror, if there is one it
// can trust, and returns the sequence to watch from (0: all).
func (s *Snapshots[T]) Resume(ctx context.Context) uint64 {
	data, err := s.store.Read(ctx)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return 0
	}
	if err != nil {
		s.log("snapshot: not read; replaying", "err", err)
		return 0
	}
	st, err := s.state(ctx)
	if err != nil {
		s.log("snapshot: stream state not read; replaying", "err", err)
		return 0
	}
	next, err := s.mirror.loadSnapshot(ctx, data, st, s.now())
	if err != nil {
		s.log("snapshot: not used; replaying", "err", err)
		return 0
	}
	s.saved.Store(next - 1)
	s.resumed.Store(next)
	return next
}

// snapshotPart is the size of the parts a snapshot is written in. A
// part is held, and copied on its way into the server, while it is
// written: the part's size is what a save adds to the live heap, and so
// to the process's peak (figures in docs/operators/performance.md).
// Smaller parts mean more objects to read at start.
//
// A var only so that tests can write smaller parts.
var snapshotPart = 8 << 20

// Resumed is the stream sequence the watcher started from after the
// snapshot was loaded at start, or 0 when none was used (a replay).
func (s *Snapshots[T]) Resumed() uint64 { return s.resumed.Load() }

// Save writes the mirror's snapshot (see snapshot.Store.Write), unless it
// has not moved since the last one.
func (s *Snapshots[T]) Save(ctx context.Context) error {
	if s.mirror.last.Load() == s.saved.Load() {
		return nil
	}
	st, err := s.state(ctx)
	if err != nil {
		return err
	}
	var seq uint64
	err = s.store.Write(ctx, func(emit func([]byte) error) (bool, error) {
		var err error
		seq, err = s.mirror.encodeSnapshot(st.Created, cmp.Or(s.partSize, snapshotPart), emit)
		return seq != 0, err
	})
	if err == nil && seq != 0 {
		s.saved.Store(seq)
	}
	return err
}

// CatchUp waits until the watcher has delivered every write the stream
// held when it was called, or until ctx ends: a snapshot saved after it
// holds them all, so the next start replays none of them. A process
// stopping right after its last writes calls it before it stops the
// watcher (under load, the watcher may not have delivered even one yet).
func (s *Snapshots[T]) CatchUp(ctx context.Context) error {
	st, err := s.state(ctx)
	if err != nil {
		return err
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for s.mirror.claimable() < st.LastSeq {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
