package kvstate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// A mirror snapshot lets a process start without replaying every stored
// request: it holds what the mirror held at a stream sequence S (each
// key's summary and index keys, or only its name when the value was held
// in full), and the watcher resumes at S+1. At a million requests the
// replay is about 15 s of header parsing and delivery; from a snapshot, a
// start takes about 4 s (bench --scenario fill --requests 1000000).
//
// A snapshot is a cache. It is written to the object store bucket
// SnapshotBucket when a process stops and every SnapshotEvery, and a
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

// SnapshotBucket is the object store bucket of mirror snapshots.
const SnapshotBucket = "snapshots"

// SnapshotEvery is how often a running process writes its snapshot (when
// its mirror moved since the last one).
const SnapshotEvery = 10 * time.Minute

// snapshotMaxAge bounds the age of the last write a snapshot holds: the
// purge markers of removals after it must not have expired yet.
const snapshotMaxAge = PurgeMarkerTTL - time.Hour

const snapshotMagic = "countersign mirror snapshot 1\n"

var errSnapshot = errors.New("kvstate: unreadable snapshot")

// snapshotHead identifies what a snapshot was taken of.
type snapshotHead struct {
	created time.Time // the stream's creation
	seq     uint64    // S: every write up to it is in the snapshot
	at      time.Time // when write S was stored
	count   uint64
}

// encodeSnapshot writes the mirror's state as a snapshot of a stream
// created at created, complete up to sequence seq; nil when the mirror
// has delivered nothing yet.
// Keys go in sorted order (loading then appends to the sorted indexes).
// The read lock is held for a chunk of keys at a time, never for all.
func (m *Mirror[T]) encodeSnapshot(created time.Time) (data []byte, seq uint64) {
	seq, at := m.last.Load(), m.lastAt.Load() // before any key is read
	if seq == 0 {
		return nil, 0
	}
	m.mu.RLock()
	keys := make([]string, 0, len(m.items))
	for k := range m.items {
		keys = append(keys, k)
	}
	m.mu.RUnlock()
	slices.Sort(keys)
	var e snapEncoder
	e.buf = make([]byte, 0, 48*len(keys)+len(snapshotMagic)+64)
	e.buf = append(e.buf, snapshotMagic...)
	e.buf = binary.AppendVarint(e.buf, created.UnixNano())
	e.buf = binary.AppendUvarint(e.buf, seq)
	e.buf = binary.AppendVarint(e.buf, at)
	countAt := len(e.buf)
	e.buf = append(e.buf, make([]byte, 8)...) // the count, fixed width: keys removed meanwhile are left out
	var count uint64
	const chunk = 4096
	for i := 0; i < len(keys); i += chunk {
		m.mu.RLock()
		for _, k := range keys[i:min(i+chunk, len(keys))] {
			it, ok := m.items[k]
			if !ok {
				continue
			}
			count++
			e.str(k)
			e.buf = binary.AppendUvarint(e.buf, it.rev)
			if it.v != nil {
				e.buf = append(e.buf, 1) // held in full: loaded from the bucket
				continue
			}
			e.buf = append(e.buf, 0)
			e.ref(it.sum.Agent)
			e.ref(it.sum.Status)
			e.buf = binary.AppendUvarint(e.buf, it.sum.Revision)
			e.buf = binary.AppendUvarint(e.buf, uint64(len(it.ix)))
			for _, x := range it.ix {
				e.ref(x)
			}
		}
		m.mu.RUnlock()
	}
	binary.LittleEndian.PutUint64(e.buf[countAt:], count)
	return e.buf, seq
}

// snapEncoder writes strings that repeat (agents, statuses, index keys)
// once, and then by number.
type snapEncoder struct {
	buf  []byte
	dict map[string]uint64
}

func (e *snapEncoder) str(s string) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// ref writes 0 and the string the first time, its number (from 1) after.
func (e *snapEncoder) ref(s string) {
	if n, ok := e.dict[s]; ok {
		e.buf = binary.AppendUvarint(e.buf, n)
		return
	}
	if e.dict == nil {
		e.dict = map[string]uint64{}
	}
	e.dict[s] = uint64(len(e.dict) + 1)
	e.buf = append(e.buf, 0)
	e.str(s)
}

type snapDecoder struct {
	b    []byte
	dict []string
	err  error
}

func (d *snapDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads what binary.AppendVarint wrote: a zig-zag uvarint.
func (d *snapDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *snapDecoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *snapDecoder) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *snapDecoder) ref() string {
	n := d.uvarint()
	switch {
	case d.err != nil:
		return ""
	case n == 0:
		s := intern(d.str())
		d.dict = append(d.dict, s)
		return s
	case n > uint64(len(d.dict)):
		d.fail()
		return ""
	}
	return d.dict[n-1]
}

func (d *snapDecoder) fail() {
	if d.err == nil {
		d.err = errSnapshot
	}
	d.b = nil
}

func decodeHead(data []byte) (snapshotHead, *snapDecoder, error) {
	if !bytes.HasPrefix(data, []byte(snapshotMagic)) {
		return snapshotHead{}, nil, errSnapshot
	}
	d := &snapDecoder{b: data[len(snapshotMagic):]}
	var h snapshotHead
	h.created = time.Unix(0, d.varint())
	h.seq = d.uvarint()
	h.at = time.Unix(0, d.varint())
	if d.err != nil || len(d.b) < 8 {
		return snapshotHead{}, nil, errSnapshot
	}
	h.count = binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	if h.count > uint64(len(d.b))/3 { // an entry takes 3 bytes at least
		return snapshotHead{}, nil, errSnapshot
	}
	return h, d, nil
}

// streamState is what a snapshot is checked against.
type streamState struct {
	created time.Time
	lastSeq uint64
}

// usable reports why a snapshot cannot be trusted for a stream, or nil.
func (h snapshotHead) usable(s streamState, now time.Time) error {
	switch {
	case !h.created.Equal(s.created):
		return fmt.Errorf("taken of another stream (created %v, the stream %v)", h.created, s.created)
	case s.lastSeq < h.seq:
		return fmt.Errorf("the stream is behind it (at %d, the snapshot at %d)", s.lastSeq, h.seq)
	case s.lastSeq > h.seq && now.Sub(h.at) > snapshotMaxAge: // written since: a removal's marker may be gone
		return fmt.Errorf("too old (its last write at %v)", h.at)
	}
	return nil
}

// loadSnapshot fills an empty mirror from data and returns the sequence
// to resume the watcher from (S+1), or an error and an empty mirror. The
// values the snapshot names as held in full are read from the bucket (with
// OnChange, as a replay delivers them).
func (m *Mirror[T]) loadSnapshot(ctx context.Context, data []byte, s streamState, now time.Time) (uint64, error) {
	h, d, err := decodeHead(data)
	if err != nil {
		return 0, err
	}
	if err := h.usable(s, now); err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.items = make(map[string]mirrored[T], h.count)
	var hot []string
	for range h.count {
		if d.err != nil {
			break
		}
		key := d.str()
		it := mirrored[T]{rev: d.uvarint()}
		if d.byte() == 1 {
			hot = append(hot, key)
			continue
		}
		it.sum.Agent, it.sum.Status = d.ref(), d.ref()
		it.sum.Revision = d.uvarint()
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			d.fail()
		}
		if d.err != nil {
			break
		}
		it.ix = make([]string, n)
		for i := range it.ix {
			it.ix[i] = d.ref()
		}
		m.items[key] = it
		m.indexLocked(key, it.ix)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		m.items, m.byIdx = map[string]mirrored[T]{}, map[string]*keyset{}
		m.mu.Unlock()
		return 0, d.err
	}
	m.mu.Unlock()
	if err := m.fetch(ctx, hot); err != nil {
		m.mu.Lock()
		m.items, m.byIdx = map[string]mirrored[T]{}, map[string]*keyset{}
		m.mu.Unlock()
		return 0, err
	}
	m.last.Store(h.seq)
	m.lastAt.Store(h.at.UnixNano())
	return h.seq + 1, nil
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
	obs    jetstream.ObjectStore
	stream jetstream.Stream
	name   string
	now    func() time.Time
	log    func(msg string, args ...any)
	saved  atomic.Uint64 // the last sequence saved
	// resumed is the sequence the last Resume had the watcher start from
	// (0: a replay of everything).
	resumed atomic.Uint64
}

// SetLogger sets where a snapshot that cannot be read or saved is told.
func (s *Snapshots[T]) SetLogger(l *slog.Logger) { s.log = l.Warn }

// state returns the stream's state, which a snapshot is checked against.
func (s *Snapshots[T]) state(ctx context.Context) (streamState, error) {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return streamState{}, err
	}
	return streamState{created: info.Created, lastSeq: info.State.LastSeq}, nil
}

// Resume loads the snapshot into the (empty) mirror, if there is one it
// can trust, and returns the sequence to watch from (0: all).
func (s *Snapshots[T]) Resume(ctx context.Context) uint64 {
	data, err := s.read(ctx)
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

// read reads the snapshot into a buffer of its size (GetBytes grows one
// by doubling: at tens of MB, a tenth of the start-up).
func (s *Snapshots[T]) read(ctx context.Context) ([]byte, error) {
	r, err := s.obs.Get(ctx, s.name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	info, err := r.Info()
	if err != nil {
		return nil, err
	}
	data := make([]byte, info.Size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, err
	}
	// Read to the end, where the reader checks the object's digest.
	if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("kvstate: snapshot: not at its end after %d bytes: %w", info.Size, errors.Join(err, errSnapshot))
	}
	return data, nil
}

// Resumed is the stream sequence the watcher started from after the
// snapshot was loaded at start, or 0 when none was used (a replay).
func (s *Snapshots[T]) Resumed() uint64 { return s.resumed.Load() }

// Save writes the mirror's snapshot, unless it has not moved since the
// last one.
func (s *Snapshots[T]) Save(ctx context.Context) error {
	if s.mirror.last.Load() == s.saved.Load() {
		return nil
	}
	st, err := s.state(ctx)
	if err != nil {
		return err
	}
	data, seq := s.mirror.encodeSnapshot(st.created)
	if data == nil {
		return nil
	}
	if _, err := s.obs.PutBytes(ctx, s.name, data); err != nil {
		return err
	}
	s.saved.Store(seq)
	return nil
}

// Keep saves the snapshot at each interval every (SnapshotEvery in a
// process) until ctx ends.
func (s *Snapshots[T]) Keep(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Save(ctx); err != nil && ctx.Err() == nil {
				s.log("snapshot: not saved", "err", err)
			}
		}
	}
}
