package approvals

import (
	"context"
	"errors"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// RemoveRequest removes a terminal request once its tenant's
// request_retention has passed since it ended (SPEC §9), if its latest
// stored revision is still kvRev. It does nothing to a request that is
// pending, not yet due, or changed since, and nothing in a tenant that
// keeps its records (retention 0). Errors: ErrUnavailable.
func (s *Service) RemoveRequest(ctx context.Context, tenant domain.TenantID, id domain.RequestID, kvRev uint64) error {
	t, ok := s.views.Tenant(tenant)
	if !ok || t.RequestRetention <= 0 {
		return nil
	}
	rec, err := s.store.GetRequest(ctx, tenant, id)
	if err != nil {
		return ignoreNothing(stateErr(err, ErrNotFound))
	}
	if due, ok := rec.RemoveAt(t.RequestRetention); rec.KVRevision != kvRev || !ok || s.now().Before(due) {
		return nil
	}
	err = s.store.RemoveRequest(ctx, tenant, id, kvRev)
	if errors.Is(err, kvstate.ErrConflict) { // changed meanwhile: its next change arms its own removal
		return nil
	}
	return stateErr(err, ErrNotFound)
}

// RemoveGrant removes a revoked grant once its tenant's request_retention
// has passed since it was revoked, if its latest stored revision is still
// kvRev. It does nothing to a grant that is in force, not yet due, or
// changed since, and nothing in a tenant that keeps its records
// (retention 0). Errors: ErrUnavailable.
func (s *Service) RemoveGrant(ctx context.Context, tenant domain.TenantID, id domain.GrantID, kvRev uint64) error {
	t, ok := s.views.Tenant(tenant)
	if !ok || t.RequestRetention <= 0 {
		return nil
	}
	g, rev, err := s.store.GetGrant(ctx, tenant, id)
	if errors.Is(err, kvstate.ErrNotFound) {
		return nil // removed already
	}
	if err != nil {
		return stateErr(err, ErrGrantNotFound)
	}
	if rev != kvRev || g.RevokedAt == nil || s.now().Before(g.RevokedAt.Add(t.RequestRetention)) {
		return nil
	}
	err = s.store.RemoveGrant(ctx, tenant, id, kvRev)
	if err == nil || errors.Is(err, kvstate.ErrConflict) || errors.Is(err, kvstate.ErrNotFound) {
		return nil // removed, or changed meanwhile: its next write is swept in turn
	}
	return stateErr(err, ErrGrantNotFound)
}
