package views

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/kvstate"
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

// snapshotMagic names the snapshot's format and what its index keys mean:
// 4 indexes a terminal request under the approver it ended with, so a
// snapshot of 3 is not used (its history would miss those).
const snapshotMagic = "countersign mirror snapshot 4\n"

var errSnapshot = errors.New("views: unreadable snapshot")

// snapshotHead identifies what a snapshot was taken of.
type snapshotHead struct {
	created time.Time // the stream's creation
	seq     uint64    // S: every write up to it is in the snapshot
	at      time.Time // when write S was stored
	packID  uint64    // the packing of the values not held in full
	sample  []byte    // and its sample
	count   uint64
}

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
	var e snapEncoder
	// A part ends after the entry that reaches partSize: room for it, so
	// that the last entry does not grow (and copy) the whole buffer.
	e.buf = make([]byte, 0, min(partSize, 200*len(keys))+64<<10)
	e.buf = append(e.buf, snapshotMagic...)
	e.buf = binary.AppendVarint(e.buf, created.UnixNano())
	e.buf = binary.AppendUvarint(e.buf, seq)
	e.buf = binary.AppendVarint(e.buf, at)
	e.buf = binary.LittleEndian.AppendUint64(e.buf, m.packID)
	var sample []byte
	if m.packer != nil {
		sample = m.packer.Sample()
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(len(sample)))
	e.buf = append(e.buf, sample...)
	var count uint64
	const chunk = 4096
	for i := 0; i < len(keys); {
		m.mu.RLock()
		for end := min(i+chunk, len(keys)); i < end && len(e.buf) < partSize; i++ {
			k := keys[i]
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
			sum := m.summary(it)
			e.ref(sum.Agent)
			e.ref(sum.Status)
			e.buf = binary.AppendUvarint(e.buf, sum.Revision)
			ix := m.ixOf(it)
			e.buf = binary.AppendUvarint(e.buf, uint64(len(ix)))
			for _, x := range ix {
				e.ref(x)
			}
			e.buf = binary.AppendUvarint(e.buf, uint64(len(it.z)))
			e.buf = append(e.buf, it.z...)
		}
		m.mu.RUnlock()
		if len(e.buf) >= partSize {
			if err := emit(e.buf); err != nil {
				return 0, err
			}
			e.buf = e.buf[:0]
		}
	}
	// A packer that completed its sample meanwhile may have packed values
	// with it that this snapshot, which does not carry it, could not
	// unpack: save again later.
	if m.packer != nil && len(sample) == 0 && len(m.packer.Sample()) > 0 {
		return 0, errors.New("views: the packer's sample was completed during the snapshot; saving again later")
	}
	e.buf = binary.LittleEndian.AppendUint64(e.buf, count)
	return seq, emit(e.buf)
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

// bytes returns the next length-prefixed bytes, in place: a loaded mirror
// keeps its packed values in the snapshot's buffer.
func (d *snapDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
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
	if !bytes.HasPrefix(data, []byte(snapshotMagic)) || len(data) < len(snapshotMagic)+8 {
		return snapshotHead{}, nil, errSnapshot
	}
	end := len(data) - 8
	d := &snapDecoder{b: data[len(snapshotMagic):end]}
	var h snapshotHead
	h.created = time.Unix(0, d.varint())
	h.seq = d.uvarint()
	h.at = time.Unix(0, d.varint())
	if d.err != nil || len(d.b) < 8 {
		return snapshotHead{}, nil, errSnapshot
	}
	h.packID = binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	h.sample = d.bytes()
	if d.err != nil {
		return snapshotHead{}, nil, errSnapshot
	}
	h.count = binary.LittleEndian.Uint64(data[end:])
	if h.count > uint64(len(d.b))/4 { // an entry takes 4 bytes at least
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
	if h.packID != m.packID {
		return 0, fmt.Errorf("%w: packed another way (%x, this process %x)", errSnapshot, h.packID, m.packID)
	}
	if len(h.sample) > 0 && (m.packer == nil || !m.packer.Adopt(h.sample)) {
		return 0, fmt.Errorf("%w: packed with a sample this process does not have", errSnapshot)
	}
	m.mu.Lock()
	m.items = make(map[string]mirrored[T], h.count)
	var hot, ix []string
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
		var sum Summary
		sum.Agent, sum.Status = d.ref(), d.ref()
		sum.Revision = d.uvarint()
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			d.fail()
		}
		if d.err != nil {
			break
		}
		ix = ix[:0]
		for range n {
			ix = append(ix, d.ref())
		}
		if it.z = d.bytes(); len(it.z) == 0 {
			d.fail() // a value not held in full is packed
		}
		if d.err != nil {
			break
		}
		m.indexLocked(key, ix)
		m.setSummary(&it, sum)
		m.items[key] = it
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
	// partSize is the size of a part (snapshotPart; smaller in tests).
	partSize int
	// resumed is the sequence the last Resume had the watcher start from
	// (0: a replay of everything).
	resumed atomic.Uint64
}

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

// A snapshot is stored in parts, objects of about snapshotPart bytes
// (nats.go publishes an object's chunks without waiting, and an object
// larger than a stream's ingest queue, 128 MiB by default, is refused),
// and a manifest under the snapshot's name that names them. The manifest
// is written after the parts, so it names only complete ones, and the
// parts it no longer names are deleted after it.
//
// A part is held, and copied on its way into the server, while it is
// written: the part's size is what a save adds to the live heap, and so
// to the process's peak (a save at stop, on a million requests, added
// about 100 MB to the live heap with parts of 32 MiB). Smaller parts mean
// more objects to read at start.
//
// A var only so that tests can write smaller parts.
var snapshotPart = 8 << 20

// maxSnapshotPart is the largest part a process reads: parts are not
// read whole into a buffer of a size they claim beyond it. It is not tied
// to snapshotPart: a snapshot written by another version, in parts of
// another size (32 MiB before 8), is read all the same.
const maxSnapshotPart = 64 << 20

const manifestMagic = "countersign snapshot manifest 1"

// manifest names a snapshot's parts: <name>.<gen>.<i> for i < parts.
type manifest struct {
	gen   string
	parts int
	size  int64
}

func (s *Snapshots[T]) partName(gen string, i int) string {
	return fmt.Sprintf("%s.%s.%d", s.name, gen, i)
}

func (s *Snapshots[T]) readManifest(ctx context.Context) (manifest, error) {
	info, err := s.obs.GetInfo(ctx, s.name)
	if err != nil {
		return manifest{}, err
	}
	if info.Size > 1024 { // not a manifest (a snapshot of an older version): never read whole
		return manifest{}, fmt.Errorf("%w: its manifest is %d bytes", errSnapshot, info.Size)
	}
	data, err := s.obs.GetBytes(ctx, s.name)
	if err != nil {
		return manifest{}, err
	}
	var mf manifest
	if n, err := fmt.Sscanf(string(data), manifestMagic+"\n%s %d %d\n", &mf.gen, &mf.parts, &mf.size); n != 3 || err != nil ||
		mf.parts < 1 || mf.size < 0 {
		return manifest{}, fmt.Errorf("%w: its manifest %q", errSnapshot, data)
	}
	return mf, nil
}

// read reads the snapshot's parts into one buffer of its size.
func (s *Snapshots[T]) read(ctx context.Context) ([]byte, error) {
	mf, err := s.readManifest(ctx)
	if err != nil {
		return nil, err
	}
	// The buffer is made of the parts' stored sizes, not of the manifest's
	// word: packed values point into it for as long as they are held, so
	// it is made once and to size.
	var size int64
	for i := range mf.parts {
		info, err := s.obs.GetInfo(ctx, s.partName(mf.gen, i))
		if err != nil {
			return nil, fmt.Errorf("views: snapshot part %d of %d: %w", i, mf.parts, err)
		}
		if info.Size > maxSnapshotPart {
			return nil, fmt.Errorf("%w: part %s is %d bytes", errSnapshot, info.Name, info.Size)
		}
		if size += int64(info.Size); size > mf.size {
			break
		}
	}
	if size != mf.size {
		return nil, fmt.Errorf("%w: its parts hold %d bytes, its manifest says %d", errSnapshot, size, mf.size)
	}
	data := make([]byte, 0, size)
	for i := range mf.parts {
		if data, err = s.readPart(ctx, s.partName(mf.gen, i), data); err != nil {
			return nil, err
		}
	}
	if int64(len(data)) != mf.size {
		return nil, fmt.Errorf("%w: %d bytes, its manifest says %d", errSnapshot, len(data), mf.size)
	}
	return data, nil
}

// readPart appends the object name to data.
func (s *Snapshots[T]) readPart(ctx context.Context, name string, data []byte) ([]byte, error) {
	r, err := s.obs.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("views: snapshot part %s: %w", name, err)
	}
	defer r.Close()
	info, err := r.Info()
	if err != nil {
		return nil, err
	}
	if info.Size > maxSnapshotPart {
		return nil, fmt.Errorf("%w: part %s is %d bytes", errSnapshot, name, info.Size)
	}
	data = slices.Grow(data, int(info.Size))
	at := len(data)
	data = data[:at+int(info.Size)]
	if _, err := io.ReadFull(r, data[at:]); err != nil {
		return nil, err
	}
	// Read to the end, where the reader checks the object's digest.
	if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("views: snapshot part %s: not at its end after %d bytes: %w", name, info.Size, errors.Join(err, errSnapshot))
	}
	return data, nil
}

// Resumed is the stream sequence the watcher started from after the
// snapshot was loaded at start, or 0 when none was used (a replay).
func (s *Snapshots[T]) Resumed() uint64 { return s.resumed.Load() }

// Save writes the mirror's snapshot, unless it has not moved since the
// last one: its parts, then the manifest naming them, then the deletion
// of the parts no manifest names any more.
func (s *Snapshots[T]) Save(ctx context.Context) error {
	if s.mirror.last.Load() == s.saved.Load() {
		return nil
	}
	st, err := s.state(ctx)
	if err != nil {
		return err
	}
	mf := manifest{gen: strconv.FormatInt(time.Now().UnixNano(), 36)}
	seq, err := s.mirror.encodeSnapshot(st.created, cmp.Or(s.partSize, snapshotPart), func(part []byte) error {
		if _, err := s.obs.PutBytes(ctx, s.partName(mf.gen, mf.parts), part); err != nil {
			return err
		}
		mf.parts++
		mf.size += int64(len(part))
		return nil
	})
	if err == nil && seq == 0 {
		return nil
	}
	if err == nil {
		_, err = s.obs.PutBytes(ctx, s.name, fmt.Appendf(nil, "%s\n%s %d %d\n", manifestMagic, mf.gen, mf.parts, mf.size))
	}
	if err != nil {
		for i := range mf.parts + 1 { // the parts written, and one that may be partly
			_ = s.obs.Delete(ctx, s.partName(mf.gen, i))
		}
		return err
	}
	s.saved.Store(seq)
	// Another process may have written its manifest since: keep its parts.
	keep := []string{mf.gen}
	if cur, err := s.readManifest(ctx); err == nil {
		keep = append(keep, cur.gen)
	}
	s.sweep(ctx, keep)
	return nil
}

// sweep deletes the parts of every generation but keep's.
func (s *Snapshots[T]) sweep(ctx context.Context, keep []string) {
	objs, err := s.obs.List(ctx)
	if err != nil {
		return
	}
	prefix := s.name + "."
	for _, o := range objs {
		gen, _, ok := strings.Cut(strings.TrimPrefix(o.Name, prefix), ".")
		if ok && strings.HasPrefix(o.Name, prefix) && !slices.Contains(keep, gen) {
			_ = s.obs.Delete(ctx, o.Name)
		}
	}
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
	for s.mirror.claimable() < st.lastSeq {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
