package kvstate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/events"
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

// BucketConfigs declares the buckets; replicas is 1 embedded, 3 clustered.
func BucketConfigs(replicas int) []jetstream.KeyValueConfig {
	kv := func(name, desc string, history uint8) jetstream.KeyValueConfig {
		return jetstream.KeyValueConfig{Bucket: name, Description: desc, History: history,
			Storage: jetstream.FileStorage, Replicas: replicas}
	}
	idem := kv(BucketIdempotency, "Idempotency-Key → request, per tenant and principal", 1)
	idem.LimitMarkerTTL = time.Minute // enables per-key TTLs
	requests := kv(BucketRequests, "request records, one key per <tenant>.<request id>", requestHistory)
	requests.LimitMarkerTTL = time.Minute // enables the purge markers' TTL (RemoveRequest)
	grants := kv(BucketGrants, "grants, one key per <tenant>.<grant id>", 8)
	grants.LimitMarkerTTL = time.Minute // enables the purge markers' TTL (RemoveGrant)
	return []jetstream.KeyValueConfig{
		requests,
		grants,
		kv(BucketAgents, "registered subagents, one key per <tenant>.<agent id>", 1),
		kv(BucketRules, "rules, one key per <tenant>.<agent id>.<rule id>", 1),
		idem,
		kv(BucketConfig, "the config file's revisions, under one key", configHistory),
		kv(BucketDelegations, "delegated work, one key per <tenant>.<agent id>.<session hash>", 1),
	}
}

// Store holds the buckets. Its methods are safe for concurrent use.
type Store struct {
	js                                   jetstream.JetStream
	requests, grants, agents, rules, idm jetstream.KeyValue
	config, delegations                  jetstream.KeyValue
	commits, idemCommits                 *committer // request and idempotency writes, group-committed
	leaderReads                          bool       // replicated buckets: decisive reads go to the leader (read.go)
	snaps                                jetstream.ObjectStore
	requestStream                        jetstream.Stream // the requests bucket's, for its snapshots
	gate                                 *writeGate       // the write probe's last answer (writable.go)
}

// Open creates the buckets if they are missing (idempotently) and binds them.
func Open(ctx context.Context, js jetstream.JetStream, replicas int) (*Store, error) {
	kvs := map[string]jetstream.KeyValue{}
	for _, cfg := range BucketConfigs(replicas) {
		kv, err := createBucket(ctx, js, cfg)
		if err != nil {
			return nil, fmt.Errorf("kvstate: bucket %s: %w", cfg.Bucket, mapErr(err))
		}
		kvs[cfg.Bucket] = kv
	}
	snaps, err := openSnapshots(ctx, js, replicas)
	if err != nil {
		return nil, fmt.Errorf("kvstate: object store %s: %w", SnapshotBucket, mapErr(err))
	}
	reqStream, err := js.Stream(ctx, StreamOf(BucketRequests))
	if err != nil {
		return nil, fmt.Errorf("kvstate: bucket %s: %w", BucketRequests, mapErr(err))
	}
	gate := newWriteGate()
	commits := &committer{nc: js.Conn(), acks: acks{nc: js.Conn()}, js: js, enabled: enableAtomic(ctx, js, BucketRequests), gate: gate}
	idemCommits := &committer{nc: js.Conn(), acks: acks{nc: js.Conn()}, js: js, enabled: enableAtomic(ctx, js, BucketIdempotency), gate: gate}
	return &Store{js: js, gate: gate, snaps: snaps, requestStream: reqStream, leaderReads: replicas > 1, commits: commits, idemCommits: idemCommits, requests: kvs[BucketRequests], grants: kvs[BucketGrants],
		agents: kvs[BucketAgents], rules: kvs[BucketRules], idm: kvs[BucketIdempotency], config: kvs[BucketConfig], delegations: kvs[BucketDelegations]}, nil
}

// StreamOf returns the JetStream stream name behind a bucket.
func StreamOf(bucket string) string { return "KV_" + bucket }

// subjectOf returns the subject a bucket stores key under.
func subjectOf(bucket, key string) string { return "$KV." + bucket + "." + key }

// RequestSubjectPrefix is the stream subject of a tenant's requests, up to
// the request id.
func RequestSubjectPrefix(tenant events.TenantID) string {
	return subjectOf(BucketRequests, string(tenant)+".")
}

// GrantSubjectPrefix is the stream subject of a tenant's grants, up to the
// grant id.
func GrantSubjectPrefix(tenant events.TenantID) string {
	return subjectOf(BucketGrants, string(tenant)+".")
}

// Requests returns the requests bucket, for mirrors and watchers.
func (s *Store) Requests() jetstream.KeyValue { return s.requests }

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

// RequestStream returns the requests bucket's stream, which its mirror's
// snapshots are checked against.
func (s *Store) RequestStream() jetstream.Stream { return s.requestStream }

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
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var kv jetstream.KeyValue
		if kv, err = js.KeyValue(ctx, cfg.Bucket); err == nil {
			var st jetstream.KeyValueStatus
			if st, err = kv.Status(ctx); err == nil && sameBucket(st.Config(), cfg) {
				return kv, nil
			}
		}
		if kv, err = js.CreateOrUpdateKeyValue(ctx, cfg); err == nil || ctx.Err() != nil {
			return kv, err
		}
		if nc := NotClustered(err, cfg.Replicas); nc != nil {
			return nil, nc
		}
		time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond)
	}
	return nil, err
}

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
