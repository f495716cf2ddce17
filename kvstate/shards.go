package kvstate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/nats-io/nats.go/jetstream"
)

// Shards.
//
// Request records (each write carrying its change's CloudEvent, the
// durable record of that event) and idempotency keys live in K pairs of
// buckets, request_shards (default 1): shard 0 is the buckets "requests"
// and "idempotency", shard i > 0 is "requests-i" and "idempotency-i". On a
// cluster each shard's streams elect their own leaders, so K shards spread
// the request writes over up to K nodes.
//
// A tenant's requests all live in one shard, the FNV-1a hash of its id
// modulo K. Everything countersign promises of a tenant's changes is then
// one stream's promise, as with one shard: a request's writes are
// compare-and-set on its key, a tenant's event log (/v1/rpc's view/page,
// /v1/events resumption) is one ordered stream, an idempotency key lives
// beside the requests it names, and a list page is read from one mirror.
// Hashing the request id instead would spread one busy tenant, at the
// price of a tenant's log and pages merged from K streams with cursors of
// K positions; a deployment whose load is one tenant is better served by
// the faster single stream (see docs/operators/operations.md).
//
// K is fixed once a shard holds a request: Open refuses another K
// (ErrLayout), since moving requests between shards is a migration
// countersign does not make.

// MaxShards bounds request_shards.
const MaxShards = 64

// ErrLayout: the configured request_shards does not match the shards this
// deployment's requests are stored in.
var ErrLayout = errors.New("kvstate: request shards")

// RequestBucket names shard i's requests bucket.
func RequestBucket(i int) string { return shardBucket(BucketRequests, i) }

// IdempotencyBucket names shard i's idempotency bucket.
func IdempotencyBucket(i int) string { return shardBucket(BucketIdempotency, i) }

func shardBucket(base string, i int) string {
	if i == 0 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, i)
}

// ShardOf is the shard of tenant's requests among k.
func ShardOf(tenant domain.TenantID, k int) int {
	if k <= 1 {
		return 0
	}
	h := uint32(2166136261) // FNV-1a, 32 bits, without hash/fnv's allocation on every write
	for i := 0; i < len(tenant); i++ {
		h = (h ^ uint32(tenant[i])) * 16777619
	}
	return int(h % uint32(k))
}

// shard is one pair of buckets: a tenant's requests and idempotency keys.
type shard struct {
	reqBucket, idmBucket string
	requests, idm        jetstream.KeyValue
	requestStream        jetstream.Stream
	commits, idemCommits *committer // group-committed writes (commit.go)
	gate                 *writeGate // the write probe's last answer for this shard (writable.go)
}

// shard returns tenant's shard.
func (s *Store) shard(tenant domain.TenantID) *shard {
	return &s.shards[ShardOf(tenant, len(s.shards))]
}

// shardOfKey returns the shard of a key <tenant>.<rest>.
func (s *Store) shardOfKey(key string) *shard {
	t, _, _ := strings.Cut(key, ".")
	return s.shard(domain.TenantID(t))
}

// Shards is K, the number of request shards.
func (s *Store) Shards() int { return len(s.shards) }

// RequestBucketOf names the requests bucket of tenant's shard.
func (s *Store) RequestBucketOf(tenant domain.TenantID) string { return s.shard(tenant).reqBucket }

// RequestShard returns shard i's requests bucket and its stream, for
// mirrors, snapshots and watchers.
func (s *Store) RequestShard(i int) (jetstream.KeyValue, jetstream.Stream) {
	return s.shards[i].requests, s.shards[i].requestStream
}

// RequestBuckets names every shard's requests bucket.
func (s *Store) RequestBuckets() []string {
	out := make([]string, len(s.shards))
	for i, sh := range s.shards {
		out[i] = sh.reqBucket
	}
	return out
}

// ShardedStreams names the streams of every shard's buckets (requests and
// idempotency), which group-commit their writes.
func (s *Store) ShardedStreams() []string {
	var out []string
	for _, sh := range s.shards {
		out = append(out, StreamOf(sh.reqBucket), StreamOf(sh.idmBucket))
	}
	return out
}

// shardConfigs declares shard i's buckets.
func shardConfigs(replicas, i int) []jetstream.KeyValueConfig {
	reqs := bucketConfig(RequestBucket(i), "request records, one key per <tenant>.<request id>", requestHistory, replicas)
	reqs.LimitMarkerTTL = LimitMarkerTTL // enables the purge markers' TTL (RemoveRequest)
	idem := bucketConfig(IdempotencyBucket(i), "Idempotency-Key → request, per tenant and principal", 1, replicas)
	idem.LimitMarkerTTL = LimitMarkerTTL // enables per-key TTLs
	return []jetstream.KeyValueConfig{reqs, idem}
}

// checkLayout refuses k shards when the requests are stored in another
// number of them: it counts the shards whose requests bucket exists and,
// if that is not k, refuses when any of them holds a message.
func checkLayout(ctx context.Context, js jetstream.JetStream, k int) error {
	var have []jetstream.Stream
	for i := 0; ; i++ {
		st, err := streamInfo(ctx, js, StreamOf(RequestBucket(i)))
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			break
		}
		if err != nil {
			return fmt.Errorf("kvstate: bucket %s: %w", RequestBucket(i), mapErr(err))
		}
		have = append(have, st)
	}
	if len(have) == 0 || len(have) == k {
		return nil
	}
	for _, st := range have {
		if st.CachedInfo().State.Msgs > 0 {
			return fmt.Errorf("%w: request_shards is %d, but this deployment's requests are stored in %d shards; "+
				"countersign does not move requests between shards: set request_shards: %d, or start on empty state",
				ErrLayout, k, len(have), len(have))
		}
	}
	// No request stored yet: the layout may still change. The shards past
	// k go, so that the shards that exist are always those of the K the
	// requests were written with (an empty shard left behind would be
	// counted as one the next time).
	for i := k; i < len(have); i++ {
		for _, b := range []string{RequestBucket(i), IdempotencyBucket(i)} {
			if err := js.DeleteKeyValue(ctx, b); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
				return fmt.Errorf("kvstate: bucket %s: %w", b, mapErr(err))
			}
		}
	}
	return nil
}

// streamInfo binds a stream, retrying as createBucket does while a
// cluster that has just started, or a node that has just come back,
// elects its leaders (a stream info then goes unanswered); a missing
// stream is ErrStreamNotFound at once.
func streamInfo(ctx context.Context, js jetstream.JetStream, name string) (jetstream.Stream, error) {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var st jetstream.Stream
		if st, err = js.Stream(ctx, name); err == nil || errors.Is(err, jetstream.ErrStreamNotFound) || ctx.Err() != nil {
			return st, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 500 * time.Millisecond):
		}
	}
	return nil, err
}
