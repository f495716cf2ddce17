package approvals

import (
	"context"
	"errors"
	"sort"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// What live surfaces (the JSON-RPC stream) need beyond the HTTP use
// cases: which choices a caller may be offered, and the pending requests
// a subscription opens with.

// Holds reports whether c holds r's capability and the largest scope c
// may give (SPEC §3): a person what their policy allows; an agent by its
// grants or a read. A service principal holds nothing.
func (s *Service) Holds(c Caller, r *domain.Request) (bool, string) {
	return s.checker.Holds(c.Tenant, c.Principal, r)
}

// Visible reports whether c may see r (SPEC §5, "Who sees a request").
func (s *Service) Visible(c Caller, r *domain.Request) bool { return s.visible(c, r) }

// PendingIn returns the pending requests c may see, from this process's
// request mirror, in the order they were last written (KV revision):
// with sessions, those of these sessions; without, c's inbox (those
// waiting on c, or those c endorsed that still wait; admin: all). Those
// the mirror holds without their arguments are read whole (Full).
// Errors: ErrUnavailable.
func (s *Service) PendingIn(ctx context.Context, c Caller, sessions map[string]bool) ([]kvstate.Record, error) {
	recs := s.views.Pending(c.Tenant.ID)
	if sessions == nil && !c.Admin() {
		recs = s.views.PendingInbox(c.Tenant.ID, c.Principal)
	}
	out := recs[:0:0]
	for _, r := range recs {
		if r.Status == domain.StatusPending && (sessions == nil || sessions[r.Session]) && s.visible(c, &r.Request) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].KVRevision < out[j].KVRevision })
	full := out[:0]
	for _, r := range out {
		r, err := s.Full(ctx, r)
		if errors.Is(err, ErrNotFound) { // removed meanwhile
			continue
		}
		if err != nil {
			return nil, err
		}
		full = append(full, r)
	}
	return full, nil
}
