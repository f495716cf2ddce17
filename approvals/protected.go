package approvals

import (
	"context"

	"github.com/countersign/countersign/domain"
)

// Watchers tells whether a live client watches a session: a protected
// write (subject.protected_write) is answered only while one does, on
// every surface (SPEC §8).
type Watchers interface {
	// Watched reports whether a client of any countersign process is
	// subscribed to session of tenant now. When it cannot tell (the bus
	// is unreachable, no process answers in time) it reports false, so
	// that a protected write is refused, never decided unwatched.
	Watched(ctx context.Context, tenant domain.TenantID, session string) bool
}

// ReasonUnwatched is the reason of the 409 that refuses an answer to a
// protected write while no client watches its session.
const ReasonUnwatched = "protected_write_unwatched"

// errUnwatched is answer rule 3's refusal of a protected write nobody
// watches.
var errUnwatched = ErrConflict.With("request conflict: a protected write is answered only while a client is subscribed to its session").
	WithReason(ReasonUnwatched)

// watched reports whether r may be answered as far as its watchers go:
// always, unless it is a protected write that no client watches (asked
// of s's Watchers; none: nobody watches).
func (s *Service) watched(ctx context.Context, r *domain.Request) bool {
	if !r.Subject.ProtectedWrite {
		return true
	}
	return s.watch != nil && r.Session != "" && s.watch.Watched(ctx, r.Tenant, r.Session)
}
