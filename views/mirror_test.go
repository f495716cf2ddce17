package views_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/views"
	"github.com/nats-io/nats.go/jetstream"
)

// decodes counts the values a mirror of counted decodes.
var decodes atomic.Int64

type counted struct{ N int }

func (c *counted) UnmarshalJSON(b []byte) error {
	decodes.Add(1)
	return json.Unmarshal(b, &c.N)
}

// countedMirror makes the bucket and a mirror of counted over it (not yet
// running), on a fresh JetStream; ctx ends with the test.
func countedMirror(t *testing.T, bucket string) (context.Context, jetstream.KeyValue, *views.Mirror[counted]) {
	t.Helper()
	b := testutil.NewJetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kv, err := b.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 4})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, kv, views.NewMirror[counted](kv, nil)
}

// A process's own write, applied to its mirror, is not decoded again when
// the watcher brings it back; another process's write is.
func TestMirrorSkipsItsOwnWrites(t *testing.T) {
	ctx, kv, m := countedMirror(t, "mirror_own")
	decodes.Store(0)
	rev, err := kv.Put(ctx, "own", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	// As a writer does right after its write. The watcher starts after it,
	// so that it surely brings the write back to a mirror that holds it
	// (started before, it could deliver the write ahead of Apply, and decode
	// it rightly).
	m.Apply("own", counted{N: 1}, rev)
	go func() { _ = m.Run(ctx) }()
	<-m.Ready()
	if _, err := kv.Put(ctx, "other", []byte("2")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool { v, ok := m.Get("other"); return ok && v.N == 2 }, "the other write mirrored")
	if n := decodes.Load(); n != 1 {
		t.Fatalf("decoded %d values, want 1 (the other process's only)", n)
	}
}

// A mirror whose watcher restarts (as it does on every reconnect) holds
// every write and delete made around the restart once the new watcher
// caught up: it resumes after the last revision it delivered, missing
// nothing. A stale mirror is not Current until a new watcher catches up.
func TestMirrorRestartResumes(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv, err := b.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "mirror_test", History: 4})
	if err != nil {
		t.Fatal(err)
	}
	m := views.NewMirror[int](kv, nil)
	if m.Current() {
		t.Fatal("current before its watcher ran")
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	put := func(k string, v int) {
		if _, err := kv.Put(ctx, k, fmt.Appendf(nil, "%d", v)); err != nil {
			t.Fatal(err)
		}
	}
	put("a", 1)
	put("b", 1)
	<-m.Ready()
	testutil.Eventually(t, 5*time.Second, func() bool { return m.Current() && m.Len() == 2 }, "current with a and b")

	m.Restart() // (the new watcher may catch up at once: Current is not asserted here)
	for i := range 50 {
		put("c", i)
		if i == 25 {
			m.Restart()
			if err := kv.Delete(ctx, "a"); err != nil {
				t.Fatal(err)
			}
		}
	}
	m.Restart()
	testutil.Eventually(t, 5*time.Second, func() bool {
		c, _ := m.Get("c")
		_, hasA := m.Get("a")
		return m.Current() && c == 49 && !hasA && m.Len() == 2
	}, "after restarts: c at its last value, a deleted, current again")
	// With no restart in flight, nothing but a new watcher makes a stale
	// mirror current again.
	m.Stale()
	if m.Current() {
		t.Error("current after Stale")
	}
	m.Restart()
	testutil.Eventually(t, 5*time.Second, m.Current, "current again after a restart")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// A write this process announced (Expect) is not decoded by the watcher:
// its writer applies it. One whose writer never applies it (the write
// landed, its acknowledgement was lost) is applied when the writer is
// done, and until then no snapshot claims it.
func TestMirrorExpectedWrites(t *testing.T) {
	ctx, kv, m := countedMirror(t, "mirror_expect")
	go func() { _ = m.Run(ctx) }()
	<-m.Ready()
	// past puts one more key and waits until the watcher delivered it: it
	// has then delivered everything written before.
	n := 0
	past := func() uint64 {
		t.Helper()
		n++
		key := fmt.Sprintf("z%d", n)
		rev, err := kv.Put(ctx, key, []byte("0"))
		if err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 5*time.Second, func() bool { _, ok := m.Get(key); return ok }, key+" mirrored")
		return rev
	}
	decodes.Store(0)

	done := m.Expect("applied")
	rev, err := kv.Put(ctx, "applied", []byte("5"))
	if err != nil {
		t.Fatal(err)
	}
	past()
	m.Apply("applied", counted{N: 5}, rev)
	done()
	if v, ok := m.Get("applied"); !ok || v.N != 5 {
		t.Fatalf("applied = %v, %v", v, ok)
	}
	if d := decodes.Load(); d != 1 {
		t.Fatalf("decoded %d values, want 1 (the other key's only)", d)
	}

	done = m.Expect("lost")
	lost, err := kv.Put(ctx, "lost", []byte("7"))
	if err != nil {
		t.Fatal(err)
	}
	last := past()
	if _, ok := m.Get("lost"); ok {
		t.Fatal("a write its writer is making was applied by the watcher")
	}
	if got := views.Claimable(m); got != lost-1 {
		t.Fatalf("a snapshot may claim %d with %d stashed (last %d), want %d", got, lost, last, lost-1)
	}
	done() // the writer failed: no Apply
	if v, ok := m.Get("lost"); !ok || v.N != 7 {
		t.Fatalf("after done: lost = %v, %v, want 7", v, ok)
	}
	if got := views.Claimable(m); got != last {
		t.Fatalf("a snapshot may claim %d once applied, want %d", got, last)
	}
}
