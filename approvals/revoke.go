package approvals

import (
	"context"
	"slices"
	"sync"

	"github.com/countersign/countersign/domain"
)

// errRevoked ends what a caller holds once its credential stops
// authenticating (SPEC §10: a removed token, a removed member's session).
// It is the cause of a held context's end; the operation then returns it.
var errRevoked = ErrUnauthenticated.With("this token or session no longer authenticates: it was removed or changed, or the session ended")

// holds are the callers' long-held operations in this process: long-polls,
// event streams, WebSockets. Each registers its caller with Hold; Revoke
// ends those whose caller it names.
type holds struct {
	mu sync.Mutex
	by map[holdKey]*holders
}

// holdKey is one credential: a token (its hash) or a session, of a
// principal in a tenant. The holds of one key share their caller.
type holdKey struct {
	tenant    domain.TenantID
	principal domain.Ref
	token     string
	session   string
}

type holders struct {
	caller Caller
	ends   map[*hold]struct{}
}

type hold struct{ cancel context.CancelCauseFunc }

func keyOf(c Caller) holdKey {
	return holdKey{tenant: c.Tenant.ID, principal: c.Principal, token: c.Token.SHA256, session: c.Session}
}

func (h *holds) add(c Caller, x *hold) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.by == nil {
		h.by = map[holdKey]*holders{}
	}
	k := keyOf(c)
	hs := h.by[k]
	if hs == nil {
		hs = &holders{caller: c, ends: map[*hold]struct{}{}}
		h.by[k] = hs
	}
	hs.ends[x] = struct{}{}
}

func (h *holds) remove(c Caller, x *hold) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := keyOf(c)
	if hs := h.by[k]; hs != nil {
		delete(hs.ends, x)
		if len(hs.ends) == 0 {
			delete(h.by, k)
		}
	}
}

// revoke ends every hold whose caller gone names and says how many.
func (h *holds) revoke(gone func(Caller) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for k, hs := range h.by {
		if !gone(hs.caller) {
			continue
		}
		for x := range hs.ends {
			x.cancel(errRevoked)
			n++
		}
		delete(h.by, k)
	}
	return n
}

// Hold registers an operation c holds open (a long-poll, an event stream,
// a WebSocket) for as long as it runs: the context it returns ends, with
// Revoked true, when c's credential stops authenticating (RevokeStale,
// Revoke), and with ctx otherwise. The caller must call release when the
// operation ends. A caller that no longer authenticates when it registers
// (a config change applied since it was admitted) is ended at once, so no
// hold slips between an admission and a revocation.
func (s *Service) Hold(ctx context.Context, c Caller) (held context.Context, release func()) {
	held, cancel := context.WithCancelCause(ctx)
	x := &hold{cancel: cancel}
	s.holds.add(c, x)
	if !s.authenticates(c) {
		cancel(errRevoked)
	}
	return held, func() { s.holds.remove(c, x); cancel(context.Canceled) }
}

// Revoked reports whether ctx (one Hold returned) ended because its
// caller's credential stopped authenticating.
func Revoked(ctx context.Context) bool { return context.Cause(ctx) == errRevoked }

// heldErr is the error of an operation whose held ctx ended: the 401 of a
// revocation, else ctx's own error.
func heldErr(ctx context.Context) error {
	if Revoked(ctx) {
		return errRevoked
	}
	return ctx.Err()
}

// RevokeStale ends the holds of every caller that no longer authenticates
// as it did when it was admitted (authenticates), and says how many it
// ended. A config change calls it in every process once the new tenants
// are in the views (SPEC §10).
func (s *Service) RevokeStale() int {
	return s.holds.revoke(func(c Caller) bool { return !s.authenticates(c) })
}

// Revoke ends the holds of the callers gone names (a session that ended,
// say), and says how many it ended.
func (s *Service) Revoke(gone func(Caller) bool) int { return s.holds.revoke(gone) }

// authenticates reports whether c's credential still authenticates as c:
// its token (by hash) names the same principal with the same scopes in
// the same tenant, or, for a session (no token hash), its member is still
// in the tenant.
func (s *Service) authenticates(c Caller) bool {
	if c.Token.SHA256 == "" {
		_, ok := s.PersonCaller(c.Tenant.ID, domain.MemberID(c.Principal.ID))
		return ok && c.Principal.Kind == domain.KindPerson
	}
	t, tok, ok := s.views.AuthenticateHash(c.Token.SHA256)
	return ok && t.ID == c.Tenant.ID && tok.Principal == c.Principal && slices.Equal(tok.Scopes, c.Token.Scopes)
}
