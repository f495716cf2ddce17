package kvstate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go/jetstream"
)

// A mirror whose watcher restarts (as it does on every reconnect) is not
// Current until the new watcher caught up, and then holds every write and
// delete made around the restart: it resumes after the last revision it
// delivered, missing nothing.
func TestMirrorRestartResumes(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv, err := b.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "mirror_test", History: 4})
	if err != nil {
		t.Fatal(err)
	}
	m := kvstate.NewMirror[int](kv, nil)
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

	m.Restart()
	if m.Current() {
		t.Error("current right after a restart")
	}
	for i := range 50 {
		put("c", i)
		if i == 25 {
			m.Restart()
			if err := kv.Delete(ctx, "a"); err != nil {
				t.Fatal(err)
			}
		}
	}
	m.Stale()
	if m.Current() {
		t.Error("current after Stale")
	}
	m.Restart()
	testutil.Eventually(t, 5*time.Second, func() bool {
		c, _ := m.Get("c")
		_, hasA := m.Get("a")
		return m.Current() && c == 49 && !hasA && m.Len() == 2
	}, "after restarts: c at its last value, a deleted, current again")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
