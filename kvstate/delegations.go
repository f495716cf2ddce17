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
)

// DelegationKey is the KV key of agent's delegated work in session:
// <tenant>.<agent id>.<sha256 of the session> (a session never appears raw
// in a key).
func DelegationKey(tenant domain.TenantID, agent domain.AgentID, session string) string {
	sum := sha256.Sum256([]byte(session))
	return string(tenant) + "." + string(agent) + "." + hex.EncodeToString(sum[:])
}

// PutDelegation records d, approved at d.ApprovedAt, and returns what the
// key holds afterwards with its KV revision. The key is written with one
// compare-and-set, and only when it is empty or holds a delegation that
// ended before d was approved: an active delegation is kept (the first
// delegator holds the session), and an approval replayed after its
// delegation ended never brings it back. Safe to repeat.
func (s *Store) PutDelegation(ctx context.Context, d *domain.Delegation) (domain.Delegation, uint64, error) {
	key := DelegationKey(d.Tenant, d.Agent, d.Session)
	data, err := json.Marshal(d)
	if err != nil {
		return domain.Delegation{}, 0, err
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		cur, rev, err := s.GetDelegation(ctx, d.Tenant, d.Agent, d.Session)
		switch {
		case errors.Is(err, ErrNotFound):
			rev, err = s.delegations.Create(ctx, key, data)
		case err != nil:
			return cur, 0, err
		case cur.Active() || !cur.EndedAt.Before(d.ApprovedAt):
			return cur, rev, nil
		default:
			rev, err = s.delegations.Update(ctx, key, data, rev)
		}
		if err = mapErr(err); !errors.Is(err, ErrConflict) {
			return *d, rev, err
		}
	}
	return domain.Delegation{}, 0, ErrConflict
}

// GetDelegation reads agent's delegation in session and its KV revision;
// ErrNotFound if there is none.
func (s *Store) GetDelegation(ctx context.Context, tenant domain.TenantID, agent domain.AgentID, session string) (domain.Delegation, uint64, error) {
	e, err := s.delegations.Get(ctx, DelegationKey(tenant, agent, session))
	if err != nil {
		return domain.Delegation{}, 0, mapErr(err)
	}
	var d domain.Delegation
	if err := json.Unmarshal(e.Value(), &d); err != nil {
		return d, 0, fmt.Errorf("kvstate: decode delegation of %s: %w", agent, err)
	}
	return d, e.Revision(), nil
}

// EndDelegation marks agent's delegation in session ended at at, with one
// compare-and-set, and returns it with its KV revision. The record stays
// (ended) so that a replayed approval cannot bring it back. Errors:
// ErrNotFound (none, or it has ended already), ErrConflict.
func (s *Store) EndDelegation(ctx context.Context, tenant domain.TenantID, agent domain.AgentID, session string, at time.Time) (domain.Delegation, uint64, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		d, rev, err := s.GetDelegation(ctx, tenant, agent, session)
		if err != nil {
			return d, rev, err
		}
		if !d.Active() {
			return d, rev, ErrNotFound
		}
		at := at.UTC()
		d.EndedAt = &at
		data, _ := json.Marshal(d)
		rev, err = s.delegations.Update(ctx, DelegationKey(tenant, agent, session), data, rev)
		if err = mapErr(err); !errors.Is(err, ErrConflict) {
			return d, rev, err
		}
	}
	return domain.Delegation{}, 0, ErrConflict
}
