package rpc

import (
	"context"
	"testing"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// Two processes' Watchers on one NATS: a session watched through one is
// watched for the other (counted: it stays watched until its last
// subscription leaves); another session or tenant, an empty session, a
// Watchers without a connection and one whose connection is gone see
// nothing watched elsewhere (fail closed).
func TestWatchersSharedAndFailClosed(t *testing.T) {
	b := testutil.NewJetStream(t)
	conn := func(name string) *nats.Conn {
		js, err := b.Connect(name)
		if err != nil {
			t.Fatal(err)
		}
		return js.Conn()
	}
	here, otherNC := NewWatchers(conn("here"), 0, nil), conn("other")
	other, alone := NewWatchers(otherNC, 0, nil), NewWatchers(nil, 0, nil)
	ctx := context.Background()
	watched := func(w *Watchers) bool { return w.Watched(ctx, "acme", "ses-1") }
	key := watchKey("acme", "ses-1")
	if watched(here) || watched(other) {
		t.Fatal("watched before any subscription")
	}
	here.add([]string{key})
	here.add([]string{key})
	for name, got := range map[string]bool{
		"here":          watched(here),
		"other process": watched(other),
	} {
		if !got {
			t.Errorf("%s: not watched while subscribed", name)
		}
	}
	for name, got := range map[string]bool{
		"another session": other.Watched(ctx, "acme", "ses-2"),
		"another tenant":  other.Watched(ctx, "globex", "ses-1"),
		"no session":      other.Watched(ctx, "acme", ""),
		"no connection":   alone.Watched(ctx, "acme", "ses-1"),
	} {
		if got {
			t.Errorf("%s: watched", name)
		}
	}
	here.remove([]string{key})
	if !watched(other) {
		t.Fatal("one of two subscriptions left: no longer watched")
	}
	here.remove([]string{key})
	if watched(here) || watched(other) {
		t.Fatal("still watched after the last subscription left")
	}
	here.add([]string{key})
	otherNC.Close()
	if other.Watched(ctx, "acme", "ses-1") {
		t.Fatal("watched through a closed connection")
	}
}
