package kvstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Idempotency is what an Idempotency-Key remembers: the request it made
// and the digest of the body that made it.
type Idempotency struct {
	RequestID  domain.RequestID `json:"request_id"`
	BodyDigest string           `json:"body_digest"`
	CreatedAt  time.Time        `json:"created_at"`
}

// IdempotencyKey is the KV key for a client's key: <tenant>.<hash>, the hash
// covering the principal and the key (neither appears raw in the key).
func IdempotencyKey(tenant domain.TenantID, principal domain.Ref, key string) string {
	sum := sha256.Sum256([]byte(principal.Kind + ":" + principal.ID + "\x00" + key))
	return string(tenant) + "." + hex.EncodeToString(sum[:])
}

// ClaimIdempotency records want under key unless the key is taken; it
// returns what the key holds (want itself when this call took it) and
// whether this call took it. The entry expires after ttl.
//
// The create is group-committed with other concurrent creates (see
// commit.go); a key whose last entry is an expiry marker is created
// through the KV API, which handles markers.
func (s *Store) ClaimIdempotency(ctx context.Context, key string, want Idempotency, ttl time.Duration) (Idempotency, bool, error) {
	data, _ := json.Marshal(want)
	sh := s.shardOfKey(key)
	msg := nats.NewMsg(subjectOf(sh.idmBucket, key))
	msg.Data = data
	msg.Header.Set(jetstream.MsgTTLHeader, ttl.String())
	_, err := sh.idemCommits.write(ctx, msg, 0)
	if err == nil {
		return want, true, nil
	}
	if !errors.Is(err, ErrConflict) {
		return Idempotency{}, false, err
	}
	// The key is taken (a read that finds none is stale or found an
	// expiry marker, which the KV create handles).
	e, err := s.readKey(ctx, sh.idmBucket, sh.idm, key)
	if errors.Is(err, ErrNotFound) {
		if _, err = sh.idm.Create(ctx, key, data, jetstream.KeyTTL(ttl)); mapErr(err) == nil {
			return want, true, nil
		}
		e, err = s.readKeyAfter(ctx, sh.idmBucket, sh.idm, key, 1)
	}
	if err != nil {
		return Idempotency{}, false, err
	}
	var got Idempotency
	if err := json.Unmarshal(e.value, &got); err != nil {
		return got, false, fmt.Errorf("kvstate: decode idempotency: %w", err)
	}
	return got, false, nil
}

// LookupIdempotency returns what key holds, reading only; ErrNotFound
// when it holds nothing (never claimed, or expired).
func (s *Store) LookupIdempotency(ctx context.Context, key string) (Idempotency, error) {
	sh := s.shardOfKey(key)
	e, err := s.readKey(ctx, sh.idmBucket, sh.idm, key)
	if err != nil {
		return Idempotency{}, err
	}
	var got Idempotency
	if err := json.Unmarshal(e.value, &got); err != nil {
		return got, fmt.Errorf("kvstate: decode idempotency: %w", err)
	}
	return got, nil
}

func jetstreamLastRevision(rev uint64) jetstream.KVDeleteOpt { return jetstream.LastRevision(rev) }
