package kvstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// GrantKey is the KV key of a grant: <tenant>.<grant id>.
func GrantKey(tenant domain.TenantID, id domain.GrantID) string {
	return string(tenant) + "." + string(id)
}

// PutGrant creates g with its grant.created event and returns its KV
// revision, or 0 if a grant with that id already exists (a no-op, so
// derived grants can be written again after a crash).
func (s *Store) PutGrant(ctx context.Context, g *domain.Grant) (uint64, error) {
	data, err := json.Marshal(g)
	if err != nil {
		return 0, err
	}
	h := nats.Header{}
	events.ChangeHeaders(h, events.TypeGrantCreated, g.Tenant, string(g.ID), 0, time.Now(), "")
	rev, err := s.publish(ctx, BucketGrants, GrantKey(g.Tenant, g.ID), data, h, 0, nil)
	if errors.Is(err, ErrConflict) {
		return 0, nil
	}
	return rev, err
}

// GetGrant reads a grant (from the stream leader on a replicated bucket);
// ErrNotFound if there is none.
func (s *Store) GetGrant(ctx context.Context, tenant domain.TenantID, id domain.GrantID) (domain.Grant, uint64, error) {
	return s.getGrantAfter(ctx, tenant, id, 0)
}

// getGrantAfter is GetGrant knowing revision floor (see readKeyAfter).
func (s *Store) getGrantAfter(ctx context.Context, tenant domain.TenantID, id domain.GrantID, floor uint64) (domain.Grant, uint64, error) {
	e, err := s.readKeyAfter(ctx, BucketGrants, s.grants, GrantKey(tenant, id), floor)
	if err != nil {
		return domain.Grant{}, 0, err
	}
	var g domain.Grant
	if err := json.Unmarshal(e.value, &g); err != nil {
		return g, 0, fmt.Errorf("kvstate: decode grant %s: %w", id, err)
	}
	return g, e.rev, nil
}

// RevokeGrant marks a grant revoked with one compare-and-set and its
// grant.revoked event, and returns it with its new KV revision. Revoking a
// revoked grant returns it unchanged. Errors: ErrNotFound, ErrConflict.
func (s *Store) RevokeGrant(ctx context.Context, tenant domain.TenantID, id domain.GrantID, at time.Time) (domain.Grant, uint64, error) {
	var floor uint64
	for attempt := 0; attempt < maxAttempts; attempt++ {
		g, rev, err := s.getGrantAfter(ctx, tenant, id, floor)
		if err != nil || g.RevokedAt != nil {
			return g, rev, err
		}
		at := at.UTC()
		g.RevokedAt = &at
		data, _ := json.Marshal(g)
		h := nats.Header{}
		events.ChangeHeaders(h, events.TypeGrantRevoked, tenant, string(id), 1, at, "")
		next, err := s.publish(ctx, BucketGrants, GrantKey(tenant, id), data, h, rev, nil)
		if !errors.Is(err, ErrConflict) {
			return g, next, err
		}
		floor = rev + 1 // the grant moved past rev: a read below is stale
	}
	return domain.Grant{}, 0, ErrConflict
}

// RemoveGrant removes a grant's key (a revoked grant past its retention)
// if its latest revision is still kvRev; otherwise ErrConflict. The purge
// marker it leaves expires after PurgeMarkerTTL.
func (s *Store) RemoveGrant(ctx context.Context, tenant domain.TenantID, id domain.GrantID, kvRev uint64) error {
	err := s.grants.Purge(ctx, GrantKey(tenant, id), jetstream.LastRevision(kvRev), jetstream.PurgeTTL(PurgeMarkerTTL))
	return mapErr(err)
}
