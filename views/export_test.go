package views

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views/snapshot"
)

// Resumed is the sequence v's request watcher resumed from after loading a
// snapshot (0: none was used).
func Resumed(v *Views) uint64 { return v.snaps.Resumed() }

// NoSnapshots makes v replay every stored request at start.
func NoSnapshots(v *Views) {
	for _, m := range v.requests.shards {
		m.resume = nil
	}
}

// Dump lists what m holds, a line per key in key order: the revision,
// whether the value is held in full, the summary, the index keys and a
// digest of the packed value.
func Dump[T any](m *Mirror[T]) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for k, it := range m.items {
		ix := slices.Clone(m.ixOf(it))
		slices.Sort(ix)
		out = append(out, fmt.Sprintf("%s rev=%d full=%v sum=%+v ix=%v z=%x", k, it.rev, it.v != nil, m.summary(it), ix, sha256.Sum256(unpacked(m, it.z))))
	}
	slices.Sort(out)
	return out
}

// EncodeSnapshot and LoadSnapshot expose a mirror's snapshot codec.
// EncodeSnapshot writes it in parts of partSize bytes and joins them.
func EncodeSnapshot[T any](m *Mirror[T], created time.Time, partSize int) []byte {
	var data []byte
	_, _ = m.encodeSnapshot(created, partSize, func(part []byte) error {
		data = append(data, part...)
		return nil
	})
	return data
}

func LoadSnapshot[T any](m *Mirror[T], data []byte, created time.Time, lastSeq uint64, now time.Time) (uint64, error) {
	return m.loadSnapshot(context.Background(), data, snapshot.Stream{Created: created, LastSeq: lastSeq}, now)
}

// SnapshotMaxAge is the age past which a snapshot is not trusted.
const SnapshotMaxAge = snapshotMaxAge

// SnapshotParts makes v's snapshots be written in parts of n bytes.
func SnapshotParts(v *Views, n int) {
	for _, s := range v.snaps.shards {
		s.partSize = n
	}
}

// DefaultSnapshotPart makes n the part size of views that set none (a
// version that writes smaller parts), until the test ends.
func DefaultSnapshotPart(t testing.TB, n int) {
	old := snapshotPart
	snapshotPart = n
	t.Cleanup(func() { snapshotPart = old })
}

// SnapshotObjects lists the names of the objects in s's snapshot bucket.
func SnapshotObjects(s *kvstate.Store) []string {
	objs, _ := s.Snapshots().List(context.Background())
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
	}
	slices.Sort(names)
	return names
}

func unpacked[T any](m *Mirror[T], z []byte) []byte {
	if z == nil {
		return nil
	}
	raw, err := m.packer.Unpack(z)
	if err != nil {
		return []byte("unpack: " + err.Error())
	}
	return raw
}

// PutSnapshotObject writes an object to s's snapshot bucket.
func PutSnapshotObject(s *kvstate.Store, name string, data []byte) error {
	_, err := s.Snapshots().PutBytes(context.Background(), name, data)
	return err
}

// ReadSnapshotObject reads an object of s's snapshot bucket.
func ReadSnapshotObject(s *kvstate.Store, name string) []byte {
	data, _ := s.Snapshots().GetBytes(context.Background(), name)
	return data
}

// PackedKept is how many packed bytes v's request mirror has kept, in all.
func PackedKept(v *Views) uint64 {
	var kept uint64
	for _, m := range v.requests.shards {
		kept += m.packer.Kept()
	}
	return kept
}

// SnapshotHasSample reports whether snapshot data carries a packing sample.
func SnapshotHasSample(data []byte) bool {
	h, _, err := snapshot.Decode(data, intern)
	return err == nil && len(h.Sample) > 0
}

// Claimable is the revision a snapshot of m may claim now.
func Claimable[T any](m *Mirror[T]) uint64 { return m.claimable() }
