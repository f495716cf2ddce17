package notify

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go/jetstream"
)

// A lease goes by the injected clock: another process cannot take it
// while its holder's time runs, takes it once the clock passes it, and a
// holder renews it every third of its TTL on that clock.
func TestLeaseGoesByTheClock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv, err := testutil.NewJetStream(t).JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "leases"})
	if err != nil {
		t.Fatal(err)
	}
	clock := testutil.NewClock(time.Now())
	a := &lease{kv: kv, key: "feed.lease", holder: "a", ttl: time.Hour, clock: clock}
	b := &lease{kv: kv, key: "feed.lease", holder: "b", ttl: time.Hour, clock: clock}
	if err := a.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if b.try(ctx) {
		t.Fatal("b took a's lease while a's time ran")
	}
	first := a.rev
	held := make(chan struct{})
	hctx, stop := context.WithCancel(ctx)
	go func() { a.hold(hctx, func() {}); close(held) }()
	testutil.Eventually(t, 10*time.Second, func() bool { return clock.Waiting() == 1 }, "a waits to renew")
	clock.Advance(20 * time.Minute)
	testutil.Eventually(t, 10*time.Second, func() bool {
		e, err := kv.Get(ctx, "feed.lease")
		return err == nil && e.Revision() > first
	}, "a renews after a third of its TTL on the clock")
	stop()
	<-held
	if err := a.acquire(ctx); err != nil { // a released it: take it again, then let it run out
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Second)
	if !b.try(ctx) {
		t.Fatal("b could not take a lease whose time had passed on the clock")
	}
}
