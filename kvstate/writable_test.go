package kvstate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// TestWriteProbe: the probe says unavailable, naming the bucket, while a
// bucket a write needs cannot take a write, and nil again once it can; a
// probe answers from its last ask until its period has passed.
func TestWriteProbe(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	store, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	fresh, cached := store.WriteProbe(0), store.WriteProbe(time.Hour)
	if err := fresh.Check(ctx); err != nil {
		t.Fatalf("fresh store: %v", err)
	}
	if err := cached.Check(ctx); err != nil {
		t.Fatalf("fresh store, cached probe: %v", err)
	}
	if err := b.JS.DeleteKeyValue(ctx, kvstate.BucketIdempotency); err != nil {
		t.Fatal(err)
	}
	err = fresh.Check(ctx)
	if !errors.Is(err, kvstate.ErrUnavailable) || !strings.Contains(err.Error(), "idempotency") {
		t.Errorf("without the idempotency bucket: %v, want ErrUnavailable naming it", err)
	}
	if err := cached.Check(ctx); err != nil {
		t.Errorf("a probe asked within its period asked again: %v", err)
	}
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Check(ctx); err != nil {
		t.Errorf("the bucket is back: %v", err)
	}
}

// TestWriteProbeGatesWrites: on replicated buckets, while the probe's
// last answer is that a bucket a write needs cannot take one, request
// writes are refused at once with ErrUnavailable (not sent to a stream
// that will not acknowledge them); once it can, they are taken again. On
// unreplicated buckets (one server, never an election) the probe gates
// nothing.
func TestWriteProbeGatesWrites(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	store, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	probe := store.WriteProbe(0)
	if err := b.JS.DeleteKeyValue(ctx, kvstate.BucketIdempotency); err != nil {
		t.Fatal(err)
	}
	if err := probe.Check(ctx); err == nil {
		t.Fatal("probe: nil without the idempotency bucket")
	}
	if _, err := store.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
		t.Fatalf("unreplicated: a write gated: %v", err)
	}
	kvstate.UseLeaderReads(store)
	_ = probe.Check(ctx)
	refused := domain.NewRequestID()
	if _, err := store.CreateRequest(ctx, pending(refused)); !errors.Is(err, kvstate.ErrUnavailable) {
		t.Fatalf("replicated, no idempotency bucket: write %v, want ErrUnavailable", err)
	}
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	if err := probe.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
		t.Fatalf("the bucket is back: write %v", err)
	}
	if _, err := store.GetRequest(ctx, "acme", refused); !errors.Is(err, kvstate.ErrNotFound) {
		t.Errorf("the refused write: %v, want ErrNotFound (never sent)", err)
	}
}

// TestWriteProbeGatesOneShard: with request shards, a shard whose bucket
// cannot take a write holds back only its own tenants' writes; another
// shard's go on.
func TestWriteProbeGatesOneShard(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	store, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	var onShard [2]domain.TenantID // a tenant of each shard
	for n := 0; onShard[0] == "" || onShard[1] == ""; n++ {
		id := domain.TenantID(fmt.Sprint("t", n))
		onShard[kvstate.ShardOf(id, 2)] = id
	}
	write := func(tenant domain.TenantID) error {
		r := pending(domain.NewRequestID())
		r.Tenant = tenant
		_, err := store.CreateRequest(ctx, r)
		return err
	}
	kvstate.UseLeaderReads(store)
	probe := store.WriteProbe(0)
	if err := b.JS.DeleteKeyValue(ctx, kvstate.IdempotencyBucket(1)); err != nil {
		t.Fatal(err)
	}
	if err := probe.Check(ctx); !errors.Is(err, kvstate.ErrUnavailable) || !strings.Contains(err.Error(), kvstate.IdempotencyBucket(1)) {
		t.Fatalf("without %s: %v, want ErrUnavailable naming it", kvstate.IdempotencyBucket(1), err)
	}
	if err := write(onShard[1]); !errors.Is(err, kvstate.ErrUnavailable) {
		t.Errorf("a tenant of the shard without its bucket: write %v, want ErrUnavailable", err)
	}
	if err := write(onShard[0]); err != nil {
		t.Errorf("a tenant of the other shard: write %v, want it taken", err)
	}
	// Without the grants bucket no shard can take an answer's writes.
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.JS.DeleteKeyValue(ctx, kvstate.BucketGrants); err != nil {
		t.Fatal(err)
	}
	_ = probe.Check(ctx)
	for _, tenant := range onShard {
		if err := write(tenant); !errors.Is(err, kvstate.ErrUnavailable) {
			t.Errorf("no grants bucket, tenant %s: write %v, want ErrUnavailable", tenant, err)
		}
	}
}
