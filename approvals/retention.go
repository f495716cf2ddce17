package approvals

import (
	"context"
	"errors"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// RemoveRequest removes a terminal request once its tenant's
// request_retention has passed since it ended (SPEC §9), if its latest
// stored revision is still kvRev. It does nothing to a request that is
// pending, not yet due, or changed since, and nothing in a tenant that
// keeps its records (retention 0). Errors: ErrUnavailable.
func (s *Service) RemoveRequest(ctx context.Context, tenant events.TenantID, id events.RequestID, kvRev uint64) error {
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
