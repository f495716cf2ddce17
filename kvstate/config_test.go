package kvstate_test

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// A config watch that cannot be made (here: its bucket is gone, as its
// leader is while a cluster elects one) does not end WatchConfig: it is
// made again, and the revisions stored once the bucket is back are
// applied. WatchConfig returns nil when ctx ends.
func TestWatchConfigOutlivesALostBucket(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.JS.DeleteKeyValue(ctx, kvstate.BucketConfig); err != nil {
		t.Fatal(err)
	}
	applied := make(chan string, 8)
	done := make(chan error, 1)
	go func() {
		done <- s.WatchConfig(ctx, func(r kvstate.ConfigRevision) { applied <- string(r.Raw) })
	}()
	time.Sleep(300 * time.Millisecond) // a failed watch or two
	select {
	case err := <-done:
		t.Fatalf("WatchConfig ended while its bucket was gone: %v", err)
	default:
	}
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1}); err != nil { // the bucket back
		t.Fatal(err)
	}
	if _, _, err := s.PublishConfig(ctx, []byte("tenants: []\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-applied:
		if got != "tenants: []\n" {
			t.Fatalf("applied %q", got)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a revision stored once the bucket was back was not applied")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("WatchConfig at ctx's end: %v", err)
	}
}
