package kvstate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// TestShardLayout: K may change while no request is stored, and the
// shards past it go; once a request is stored, another K is refused,
// naming both, whichever way it changed.
func TestShardLayout(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1, Shards: 3}); err != nil {
		t.Fatal(err)
	}
	store, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1, Shards: 1})
	if err != nil {
		t.Fatalf("3 shards to 1 with nothing stored: %v", err)
	}
	for _, bucket := range []string{kvstate.RequestBucket(1), kvstate.IdempotencyBucket(2)} {
		if _, err := b.JS.KeyValue(ctx, bucket); err == nil {
			t.Errorf("%s is still there after K went to 1", bucket)
		}
	}
	// A tenant that hashes away from shard 0 among 3: with its request in
	// shard 0, a K of 3 would lose it.
	tenant := domain.TenantID("")
	for n := 0; tenant == ""; n++ {
		if id := domain.TenantID(fmt.Sprint("t", n)); kvstate.ShardOf(id, 3) != 0 {
			tenant = id
		}
	}
	r := pending(domain.NewRequestID())
	r.Tenant = tenant
	if _, err := store.CreateRequest(ctx, r); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{3, 2} {
		_, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1, Shards: k})
		if !errors.Is(err, kvstate.ErrLayout) || !strings.Contains(err.Error(), fmt.Sprintf("request_shards is %d", k)) || !strings.Contains(err.Error(), "stored in 1 shards") {
			t.Errorf("K %d over a request stored with K 1: %v, want ErrLayout naming both", k, err)
		}
	}
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1, Shards: -1}); !errors.Is(err, kvstate.ErrLayout) {
		t.Errorf("K -1: %v, want ErrLayout", err)
	}
}
