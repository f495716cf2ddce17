package views_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// snapshotFixture writes requests of every shape: pending, decided by a
// person, endorsed by an agent, cancelled.
func snapshotFixture(t *testing.T, s *kvstate.Store, n int) []kvstate.Record {
	t.Helper()
	ctx := context.Background()
	var out []kvstate.Record
	for i := range n {
		r := pending(domain.NewRequestID())
		rec, err := s.CreateRequest(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 4 {
		case 1:
			rec = transition(t, s, rec, deny("u-1"))
		case 2:
			rec = transition(t, s, rec, endorse(domain.AgentID(fmt.Sprintf("agt_%d", i%3))))
			rec = transition(t, s, rec, deny("u-2"))
		case 3:
			rec = transition(t, s, rec, func(q *domain.Request) (string, error) {
				q.Status = domain.StatusCancelled
				q.Decision = &domain.Decision{Status: domain.StatusCancelled, By: domain.Ref{Kind: domain.KindAgent, ID: "agt_a"}, DecidedAt: time.Now()}
				return events.TypeRequestCancelled, nil
			})
		}
		out = append(out, rec)
	}
	return out
}

func deny(person string) kvstate.Mutation {
	return func(q *domain.Request) (string, error) {
		q.Status = domain.StatusDenied
		q.Decision = &domain.Decision{Status: domain.StatusDenied, By: domain.Ref{Kind: domain.KindPerson, ID: person}, DecidedAt: time.Now()}
		return events.TypeRequestDecided, nil
	}
}

func transition(t *testing.T, s *kvstate.Store, rec kvstate.Record, fn kvstate.Mutation) kvstate.Record {
	t.Helper()
	rec, err := s.TransitionFrom(context.Background(), rec, fn)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// runViews starts views over s (snapshots off unless useSnapshot) and
// returns them once ready, with the keys OnChange saw held in full.
func runViews(t *testing.T, s *kvstate.Store, useSnapshot bool) (*views.Views, func() []string, context.CancelFunc) {
	t.Helper()
	v := newViews(t, s, []*domain.Tenant{{ID: "acme"}})
	if !useSnapshot {
		views.NoSnapshots(v)
	}
	var mu sync.Mutex
	changed := map[string]bool{}
	v.Requests().OnChange(func(key string, r kvstate.Record, deleted bool) {
		mu.Lock()
		defer mu.Unlock()
		changed[key] = !deleted && r.Status == domain.StatusPending
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = v.Run(ctx) }()
	if err := v.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	pendingSeen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for k, p := range changed {
			if p {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		return out
	}
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return v, pendingSeen, stop
}

// waitHeld waits until v's mirror holds rec.
func waitHeld(t *testing.T, v *views.Views, rec kvstate.Record) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, rev, ok := v.Requests().Held(kvstate.RequestKey(rec.Tenant, rec.ID)); ok && rev >= rec.KVRevision {
			return
		}
	}
	t.Fatalf("%s is not held", rec.ID)
}

// scans lists what each inbox scope walks, as a list page would.
func scans(v *views.Views) []string {
	var out []string
	for _, scope := range []views.RequestScope{views.TenantScope("acme"), views.PendingScope("acme"),
		views.InboxScope("acme", domain.Ref{Kind: domain.KindPerson, ID: "u-1"}),
		views.InboxScope("acme", domain.Ref{Kind: domain.KindPerson, ID: "u-2"}),
		views.InboxScope("acme", domain.Ref{Kind: domain.KindAgent, ID: "agt_1"})} {
		var ids []string
		v.ScanRequests("acme", scope, "", func(id domain.RequestID, s views.Summary, rev uint64, r *kvstate.Record) bool {
			ids = append(ids, fmt.Sprintf("%s@%d/%v", id, rev, r != nil))
			return true
		})
		out = append(out, string(scope)+": "+strings.Join(ids, " "))
	}
	return out
}

// A process that starts from a snapshot holds exactly what a process that
// replays every stored request holds, writes made after the snapshot
// included (new requests, an end, a removal), and tells OnChange of every
// pending request, as a replay does (deadlines and offers hang on it).
func TestSnapshotResumesLikeAReplay(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	recs := snapshotFixture(t, s, 40)
	v1, _, stop1 := runViews(t, s, true)
	if views.Resumed(v1) != 0 {
		t.Fatal("resumed from a snapshot before any was saved")
	}
	// Saved twice, in parts of 512 bytes: the second generation's parts
	// and its manifest are all that is left.
	views.SnapshotParts(v1, 512)
	if err := v1.Snapshots().Save(ctx); err != nil {
		t.Fatal(err)
	}
	first := views.SnapshotObjects(s)
	recs = append(recs, snapshotFixture(t, s, 2)...)
	waitHeld(t, v1, recs[len(recs)-1])
	if err := v1.Snapshots().Save(ctx); err != nil {
		t.Fatal(err)
	}
	objs := views.SnapshotObjects(s)
	if len(objs) < 3 || len(objs) > len(first)+1 || slices.ContainsFunc(objs, func(o string) bool { return slices.Contains(first, o) && o != kvstate.BucketRequests }) {
		t.Fatalf("after two saves the bucket holds %v (after the first, %v)", objs, first)
	}
	stop1()

	// After the snapshot: more requests, a pending one ended, one endorsed,
	// a terminal one removed.
	recs = append(recs, snapshotFixture(t, s, 8)...)
	transition(t, s, recs[0], deny("u-1"))
	transition(t, s, recs[4], endorse("agt_1"))
	if err := s.RemoveRequest(ctx, "acme", recs[1].ID, recs[1].KVRevision); err != nil {
		t.Fatal(err)
	}

	v2, pending2, _ := runViews(t, s, true)
	if views.Resumed(v2) == 0 {
		t.Fatal("the snapshot was not used")
	}
	v3, pending3, _ := runViews(t, s, false)
	if views.Resumed(v3) != 0 {
		t.Fatal("a replay resumed from a snapshot")
	}
	got, want := views.Dump(v2.Requests().Shard(0)), views.Dump(v3.Requests().Shard(0))
	if !slices.Equal(got, want) {
		t.Fatalf("from the snapshot:\n%s\nfrom a replay:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(got) != 49 {
		t.Fatalf("holds %d requests, want 49", len(got))
	}
	if g, w := scans(v2), scans(v3); !slices.Equal(g, w) {
		t.Fatalf("scans from the snapshot:\n%s\nfrom a replay:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	if g, w := pending2(), pending3(); !slices.Equal(g, w) || len(g) == 0 {
		t.Fatalf("OnChange saw pending %v from the snapshot, %v from a replay", g, w)
	}
}

// A snapshot that cannot be trusted (of another stream, ahead of the
// stream, older than the removal markers of writes made since, damaged)
// leaves the mirror empty
// and is an error, so the process replays; a good one loads.
func TestSnapshotNotTrusted(t *testing.T) {
	s := newStore(t)
	snapshotFixture(t, s, 40) // records enough to complete a packing sample
	v, _, _ := runViews(t, s, false)
	created := time.Unix(1_700_000_000, 0)
	data := views.EncodeSnapshot(v.Requests().Shard(0), created, 100) // in many parts
	if data == nil || !views.SnapshotHasSample(data) {
		t.Fatalf("no snapshot (%d bytes), or one without a packing sample, of a mirror that holds requests", len(data))
	}
	seq := uint64(0) // the last revision the watcher delivered: the highest held
	for _, line := range views.Dump(v.Requests().Shard(0)) {
		var rev uint64
		fmt.Sscanf(line[strings.Index(line, "rev="):], "rev=%d", &rev)
		seq = max(seq, rev)
	}
	now := time.Now()
	fresh := func() *views.Mirror[kvstate.Record] {
		return newViews(t, s, []*domain.Tenant{{ID: "acme"}}).Requests().Shard(0)
	}
	for _, c := range []struct {
		name    string
		data    []byte
		created time.Time
		lastSeq uint64
		now     time.Time
	}{
		{"another stream", data, created.Add(time.Second), seq, now},
		{"the stream behind it", data, created, seq - 1, now},
		{"too old", data, created, seq + 1, now.Add(views.SnapshotMaxAge + time.Minute)},
		{"truncated", data[:len(data)-3], created, seq, now},
		{"a byte more", append(slices.Clone(data), 0), created, seq, now},
		{"not a snapshot", []byte("{}"), created, seq, now},
		{"a count past its length", countOf(data, 1<<60), created, seq, now},
		{"a count that would allocate gigabytes", countOf(data, 1<<24), created, seq, now},
		{"packed with another dictionary", packIDOf(data, 42), created, seq, now},
	} {
		m := fresh()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if next, err := views.LoadSnapshot(m, c.data, c.created, c.lastSeq, c.now); err == nil || next != 0 {
			t.Errorf("%s: loaded (resume at %d, %v)", c.name, next, err)
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
			t.Errorf("%s: allocated %d MiB on the count's word", c.name, n>>20)
		}
		if m.Len() != 0 {
			t.Errorf("%s: left %d keys in the mirror", c.name, m.Len())
		}
	}
	// A process that packed with another sample already (it packed
	// records enough to complete one) cannot read the snapshot's packed
	// values.
	other := fresh()
	for i := range 20 {
		r := recs0()
		r.Request.Tool = "a tool no other record has"
		other.Apply(fmt.Sprintf("acme.other-%02d", i), r, uint64(i+1))
	}
	if next, err := views.LoadSnapshot(other, data, created, seq, now); err == nil || next != 0 {
		t.Errorf("loaded by a mirror with another packing sample (resume at %d, %v)", next, err)
	}
	// Old, but nothing was written since: no removal marker can be missed.
	if next, err := views.LoadSnapshot(fresh(), data, created, seq, now.Add(views.SnapshotMaxAge+time.Minute)); err != nil || next != seq+1 {
		t.Errorf("an old snapshot of a stream written no more since: resume at %d, %v", next, err)
	}
	m := fresh()
	next, err := views.LoadSnapshot(m, data, created, seq, now)
	if err != nil || next != seq+1 {
		t.Fatalf("a good snapshot: resume at %d, %v; want %d", next, err, seq+1)
	}
	if got, want := views.Dump(m), views.Dump(v.Requests().Shard(0)); !slices.Equal(got, want) {
		t.Fatalf("loaded:\n%s\nheld:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// recs0 returns a terminal record, not stored.
func recs0() kvstate.Record {
	r := pending(domain.NewRequestID())
	r.Status = domain.StatusDenied
	r.Decision = &domain.Decision{Status: domain.StatusDenied, By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, DecidedAt: time.Now()}
	return kvstate.Record{Request: *r, KVRevision: 1}
}

// countOf returns a copy of snapshot data claiming n entries (the count
// is its last 8 bytes), and packIDOf one claiming packing id (the 8
// bytes after the magic line and three varints).
func countOf(data []byte, n uint64) []byte {
	out := slices.Clone(data)
	binary.LittleEndian.PutUint64(out[len(out)-8:], n)
	return out
}

func packIDOf(data []byte, id uint64) []byte {
	out := slices.Clone(data)
	i := bytes.IndexByte(out, '\n') + 1
	for range 3 {
		_, w := binary.Uvarint(out[i:])
		i += w
	}
	binary.LittleEndian.PutUint64(out[i:], id)
	return out
}

// A manifest that does not name a whole snapshot (garbage, more parts
// than were written, another size, an older version's snapshot in its
// place) is not used: the process replays.
func TestSnapshotManifestNotTrusted(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	snapshotFixture(t, s, 12)
	v, _, stop := runViews(t, s, true)
	views.SnapshotParts(v, 512)
	if err := v.Snapshots().Save(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	good := views.ReadSnapshotObject(s, kvstate.BucketRequests)
	var gen string
	var parts, size int
	if n, _ := fmt.Sscanf(string(good), "countersign snapshot manifest 1\n%s %d %d\n", &gen, &parts, &size); n != 3 || parts < 2 {
		t.Fatalf("manifest %q", good)
	}
	for _, c := range []struct{ name, manifest string }{
		{"garbage", "{}"},
		{"a part more", fmt.Sprintf("countersign snapshot manifest 1\n%s %d %d\n", gen, parts+1, size)},
		{"a part less", fmt.Sprintf("countersign snapshot manifest 1\n%s %d %d\n", gen, parts-1, size)},
		{"another size", fmt.Sprintf("countersign snapshot manifest 1\n%s %d %d\n", gen, parts, size+1)},
		{"a huge size", fmt.Sprintf("countersign snapshot manifest 1\n%s %d %d\n", gen, parts, int64(1)<<50)},
		{"an older version's snapshot", strings.Repeat("x", 4096)},
	} {
		if err := views.PutSnapshotObject(s, kvstate.BucketRequests, []byte(c.manifest)); err != nil {
			t.Fatal(err)
		}
		v, _, stop := runViews(t, s, true)
		if views.Resumed(v) != 0 {
			t.Errorf("%s: resumed from the snapshot", c.name)
		}
		if v.Requests().Len() != 12 {
			t.Errorf("%s: holds %d requests after the replay, want 12", c.name, v.Requests().Len())
		}
		stop()
	}
	if err := views.PutSnapshotObject(s, kvstate.BucketRequests, good); err != nil {
		t.Fatal(err)
	}
	v, _, _ = runViews(t, s, true)
	if views.Resumed(v) == 0 {
		t.Error("the good manifest, put back, is not used")
	}
}

// A snapshot written in parts larger than this version writes (an earlier
// version's 32 MiB parts, here a whole snapshot in one part read by a
// version that writes parts of 1 KiB) is read, not replayed: the size a
// reader accepts is not the size it writes.
func TestSnapshotOfLargerPartsResumes(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	snapshotFixture(t, s, 40)
	v1, _, stop1 := runViews(t, s, true)
	views.SnapshotParts(v1, 1<<20)
	if err := v1.Snapshots().Save(ctx); err != nil {
		t.Fatal(err)
	}
	if objs := views.SnapshotObjects(s); len(objs) != 2 {
		t.Fatalf("the snapshot is %v, want one part and its manifest", objs)
	}
	stop1()
	views.DefaultSnapshotPart(t, 1<<10)
	v2, _, _ := runViews(t, s, true)
	if views.Resumed(v2) == 0 {
		t.Fatal("a snapshot of larger parts was not used")
	}
	v3, _, _ := runViews(t, s, false)
	if got, want := views.Dump(v2.Requests().Shard(0)), views.Dump(v3.Requests().Shard(0)); !slices.Equal(got, want) {
		t.Fatalf("from the snapshot:\n%s\nfrom a replay:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// CatchUp returns once the watcher has delivered every write the stream
// held when it was called (a snapshot saved then holds them all), and
// while the watcher cannot deliver them, not before its context ends.
func TestSnapshotCatchUp(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	snapshotFixture(t, s, 4)
	v, _, stop := runViews(t, s, true)
	recs := snapshotFixture(t, s, 8)
	if err := v.Snapshots().CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if _, rev, ok := v.Requests().Held(kvstate.RequestKey(last.Tenant, last.ID)); !ok || rev < last.KVRevision {
		t.Fatalf("after CatchUp the last write is not held (held %v at %d, written at %d)", ok, rev, last.KVRevision)
	}
	stop()
	snapshotFixture(t, s, 1)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := v.Snapshots().CatchUp(short); err == nil {
		t.Fatal("CatchUp returned with the watcher stopped and a write it never delivered")
	}
}
