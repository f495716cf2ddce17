package kvstate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/backoff"
	"github.com/countersign/countersign/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket names (SPEC §9).
const (
	BucketRequests    = "requests"
	BucketGrants      = "grants"
	BucketAgents      = "agents"
	BucketRules       = "rules"
	BucketIdempotency = "idempotency"
	BucketDelegations = "delegations"
	// BucketConfig holds the config file's revisions (config.go).
	BucketConfig = "config"
	// SnapshotBucket is the object store bucket of mirror snapshots (see
	// package views).
	SnapshotBucket = "snapshots"
)

// requestHistory keeps every revision of a request (a request changes a
// handful of times), so that the outbox never misses one.
const requestHistory = 64

// LimitMarkerTTL is the limit marker TTL of the buckets with per-key TTLs
// (idempotency keys) or purge markers with a TTL (requests, grants).
const LimitMarkerTTL = time.Minute

func bucketConfig(name, desc string, history uint8, replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: name, Description: desc, History: history,
		Storage: jetstream.FileStorage, Replicas: replicas}
}

// BucketConfigs declares the buckets of k request shards (shards.go);
// replicas is 1 embedded, 3 clustered.
func BucketConfigs(replicas, k int) []jetstream.KeyValueConfig {
	grants := bucketConfig(BucketGrants, "grants, one key per <tenant>.<grant id>", 8, replicas)
	grants.LimitMarkerTTL = LimitMarkerTTL // enables the purge markers' TTL (RemoveGrant)
	var out []jetstream.KeyValueConfig
	for i := range k {
		out = append(out, shardConfigs(replicas, i)...)
	}
	return append(out,
		grants,
		bucketConfig(BucketAgents, "registered subagents, one key per <tenant>.<agent id>", 1, replicas),
		bucketConfig(BucketRules, "rules, one key per <tenant>.<agent id>.<rule id>", 1, replicas),
		bucketConfig(BucketConfig, "the config file's revisions, under one key", configHistory, replicas),
		bucketConfig(BucketDelegations, "delegated work, one key per <tenant>.<agent id>.<session hash>", 1, replicas),
	)
}

// Store holds the buckets. Its methods are safe for concurrent use.
type Store struct {
	js                                         jetstream.JetStream
	shards                                     []shard // request shards (shards.go); a tenant's are one
	grants, agents, rules, config, delegations jetstream.KeyValue
	leaderReads                                bool // replicated buckets: decisive reads go to the leader (read.go)
	snaps                                      jetstream.ObjectStore
	tap                                        atomic.Pointer[func(stream string, seq uint64, m *nats.Msg)] // SetTap
}

// Config is what Open opens the state with.
type Config struct {
	// JS is the JetStream the buckets live in. Required.
	JS jetstream.JetStream
	// Replicas of every bucket: 1 on the embedded server, 3 on a cluster
	// (the replicas setting). Default 1.
	Replicas int
	// Shards lays the requests out in that many buckets (request_shards,
	// 1 to MaxShards; see shards.go). Default 1.
	Shards int
	// SyncsFree says the store is in memory (the embedded server's store
	// on a tmpfs): a sync costs nothing, so request writes are never
	// gathered into atomic batches, which would only add the server's
	// staging of each (commit.go). Default false: each group goes the way
	// that cost less lately.
	SyncsFree bool
}

// Open creates the buckets if they are missing (idempotently) and binds
// them. It refuses a Config without JS, and a Shards outside 1 to
// MaxShards or other than those the stored requests are in (ErrLayout).
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.JS == nil {
		return nil, errors.New("kvstate: Config.JS is required")
	}
	js, replicas := cfg.JS, max(cfg.Replicas, 1)
	shards := cmp.Or(cfg.Shards, 1)
	if shards < 1 || shards > MaxShards {
		return nil, fmt.Errorf("%w: %d is not 1 to %d", ErrLayout, shards, MaxShards)
	}
	if err := checkLayout(ctx, js, shards); err != nil {
		return nil, err
	}
	kvs := map[string]jetstream.KeyValue{}
	for _, bc := range BucketConfigs(replicas, shards) {
		kv, err := createBucket(ctx, js, bc)
		if err != nil {
			return nil, fmt.Errorf("kvstate: bucket %s: %w", bc.Bucket, mapErr(err))
		}
		kvs[bc.Bucket] = kv
	}
	snaps, err := openSnapshots(ctx, js, replicas)
	if err != nil {
		return nil, fmt.Errorf("kvstate: object store %s: %w", SnapshotBucket, mapErr(err))
	}
	s := &Store{js: js, snaps: snaps, leaderReads: replicas > 1, grants: kvs[BucketGrants],
		agents: kvs[BucketAgents], rules: kvs[BucketRules], config: kvs[BucketConfig], delegations: kvs[BucketDelegations]}
	for i := range shards {
		gate := newWriteGate()
		sh := shard{reqBucket: RequestBucket(i), idmBucket: IdempotencyBucket(i), gate: gate}
		sh.requests, sh.idm = kvs[sh.reqBucket], kvs[sh.idmBucket]
		if sh.requestStream, err = streamInfo(ctx, js, StreamOf(sh.reqBucket)); err != nil {
			return nil, fmt.Errorf("kvstate: bucket %s: %w", sh.reqBucket, mapErr(err))
		}
		sh.commits = &committer{nc: js.Conn(), acks: acks{nc: js.Conn()}, js: js, enabled: enableAtomic(ctx, js, sh.reqBucket), gate: gate,
			choice: chooser{syncsFree: cfg.SyncsFree}}
		sh.idemCommits = &committer{nc: js.Conn(), acks: acks{nc: js.Conn()}, js: js, enabled: enableAtomic(ctx, js, sh.idmBucket), gate: gate,
			choice: chooser{syncsFree: cfg.SyncsFree}}
		s.shards = append(s.shards, sh)
	}
	return s, nil
}

// StreamOf returns the JetStream stream name behind a bucket.
func StreamOf(bucket string) string { return "KV_" + bucket }

// subjectOf returns the subject a bucket stores key under.
func subjectOf(bucket, key string) string { return "$KV." + bucket + "." + key }

// RequestSubjectPrefix is the stream subject of a tenant's requests, up to
// the request id, in its shard's stream among k (ShardOf).
func RequestSubjectPrefix(tenant domain.TenantID, k int) string {
	return subjectOf(RequestBucket(ShardOf(tenant, k)), string(tenant)+".")
}

// GrantSubjectPrefix is the stream subject of a tenant's grants, up to the
// grant id.
func GrantSubjectPrefix(tenant domain.TenantID) string {
	return subjectOf(BucketGrants, string(tenant)+".")
}

// Grants returns the grants bucket.
func (s *Store) Grants() jetstream.KeyValue { return s.grants }

// Agents returns the registered-agents bucket.
func (s *Store) Agents() jetstream.KeyValue { return s.agents }

// Rules returns the rules bucket.
func (s *Store) Rules() jetstream.KeyValue { return s.rules }

// Delegations returns the delegated-work bucket.
func (s *Store) Delegations() jetstream.KeyValue { return s.delegations }

// Snapshots returns the object store bucket of mirror snapshots.
func (s *Store) Snapshots() jetstream.ObjectStore { return s.snaps }

// JetStream returns the JetStream context the store writes through.
func (s *Store) JetStream() jetstream.JetStream { return s.js }

// errCodeReplicasNotSupported is nats-server's JSStreamReplicasNotSupportedErr:
// a stream with replicas > 1 asked of a server that is not clustered.
const errCodeReplicasNotSupported jetstream.ErrorCode = 10074

// NotClustered returns, when err is a standalone NATS server refusing a
// stream of more than one replica, an error that names the setting (nil
// otherwise). No retry makes a standalone server clustered, so callers
// that retry a stream's creation stop at once on it, instead of retrying
// silently while the process serves nothing (nats_url with the clustered
// default of 3 replicas, against one server).
func NotClustered(err error, replicas int) error {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != errCodeReplicasNotSupported {
		return nil
	}
	return fmt.Errorf("replicas is %d, but the NATS server is not clustered (set replicas: 1, or connect to a cluster of at least %d servers): %w",
		replicas, replicas, err)
}

// createBucket creates a bucket, or updates it when its configuration
// differs from cfg, retrying while a cluster that has just started elects
// its leaders. A bucket that is already as declared is bound without an
// update: every process starts through here, and an update would both
// reset the stream's atomic publish (enableAtomic) under the processes
// already writing, and race their consumer creation inside nats-server.
func createBucket(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := backoff.Retry(ctx, DeclareRetry, DeclareAttempts, func(ctx context.Context) error {
		var err error
		if kv, err = js.KeyValue(ctx, cfg.Bucket); err == nil {
			var st jetstream.KeyValueStatus
			if st, err = kv.Status(ctx); err == nil && sameBucket(st.Config(), cfg) {
				return nil
			}
		}
		if kv, err = js.CreateOrUpdateKeyValue(ctx, cfg); err == nil {
			return nil
		}
		if nc := NotClustered(err, cfg.Replicas); nc != nil {
			return backoff.Permanent(nc)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return kv, nil
}

// DeclareRetry spaces the attempts to declare a bucket or a stream while
// a cluster that has just started elects its leaders: 0.5 s, 1 s, 2 s,
// then 4 s, about 25 s over DeclareAttempts, each wait ended by ctx.
var DeclareRetry = backoff.Policy{Base: 500 * time.Millisecond, Max: 4 * time.Second}

// DeclareAttempts bounds the attempts to declare a bucket or a stream.
const DeclareAttempts = 10

// sameBucket reports whether a bucket's configuration has what Open
// declares (the fields BucketConfigs sets).
func sameBucket(have, want jetstream.KeyValueConfig) bool {
	return have.Description == want.Description && have.History == want.History &&
		have.Storage == want.Storage && have.Replicas == want.Replicas &&
		have.LimitMarkerTTL == want.LimitMarkerTTL
}

// openSnapshots binds the snapshot object store, creating it if it is
// missing (never updating it: see createBucket).
func openSnapshots(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, SnapshotBucket)
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return obs, err
	}
	obs, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: SnapshotBucket,
		Description: "snapshots of the request mirror, so that a process starts without replaying every request (a cache)",
		Storage:     jetstream.FileStorage, Replicas: replicas})
	if errors.Is(err, jetstream.ErrBucketExists) { // another process created it meanwhile
		return js.ObjectStore(ctx, SnapshotBucket)
	}
	return obs, err
}
