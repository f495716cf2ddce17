package approvals

import (
	"context"
	"sort"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// grantsFrom returns the grants a decided request leaves (SPEC §3): an
// approval of scope session or lifetime gives the requester and every
// endorser an allow grant; a deny of such scope leaves a deny grant for the
// requester only; once, or session without a session, leaves none. Ids are
// derived from the request, so writing them again writes nothing new.
func grantsFrom(r *events.Request) []events.Grant {
	d := r.Decision
	if d == nil || (d.Status != events.StatusApproved && d.Status != events.StatusDenied) ||
		(d.By.Kind != events.KindPerson && d.By.Kind != events.KindAgent) {
		return nil
	}
	if d.Scope == events.ScopeOnce || (d.Scope == events.ScopeSession && r.Session == "") {
		return nil
	}
	agents := []events.AgentID{r.Agent}
	effect := events.EffectDeny
	if d.Status == events.StatusApproved {
		effect = events.EffectAllow
		for _, e := range r.Endorsements {
			agents = append(agents, e.Agent)
		}
	}
	out := make([]events.Grant, 0, len(agents))
	for _, a := range agents {
		g := events.Grant{ID: events.DerivedGrantID(r.ID, a, d.DecidedAt), Tenant: r.Tenant, Agent: a,
			Capability: r.Capability, Effect: effect, Scope: d.Scope, RequestID: r.ID, CreatedBy: d.By, CreatedAt: d.DecidedAt}
		if d.Scope == events.ScopeSession {
			g.Session = r.Session
		}
		out = append(out, g)
	}
	return out
}

// ensureGrants writes the grants a decided request leaves and puts them in
// force in this process at once. Safe to repeat.
func (s *Service) ensureGrants(ctx context.Context, r *events.Request) error {
	for _, g := range grantsFrom(r) {
		if _, held := s.views.GrantMirror().Get(kvstate.GrantKey(g.Tenant, g.ID)); held {
			continue
		}
		rev, err := s.store.PutGrant(ctx, &g)
		if err != nil {
			return stateErr(err, ErrUnavailable)
		}
		cur := g
		if rev == 0 { // written before (by the outbox or an earlier answer)
			if cur, rev, err = s.store.GetGrant(ctx, g.Tenant, g.ID); err != nil {
				return stateErr(err, ErrUnavailable)
			}
		}
		s.views.GrantMirror().Apply(kvstate.GrantKey(g.Tenant, g.ID), cur, rev)
	}
	return nil
}

// GrantFilter selects grants for GET /v1/grants.
type GrantFilter struct {
	Agent, Effect, Scope string
	Revoked              bool
	Limit                int
	Cursor               string
}

// ParseGrantFilter validates the query of GET /v1/grants.
func ParseGrantFilter(agent, effect, scope, revoked, limit, cursor string) (GrantFilter, error) {
	f := GrantFilter{Agent: agent, Effect: effect, Scope: scope, Cursor: cursor}
	var err error
	switch {
	case effect != "" && effect != events.EffectAllow && effect != events.EffectDeny:
		err = invalid("effect", "effect must be allow or deny")
	case scope != "" && scope != events.ScopeSession && scope != events.ScopeLifetime:
		err = invalid("scope", "scope must be session or lifetime")
	case revoked != "" && revoked != "true" && revoked != "false":
		err = invalid("revoked", "revoked must be true or false")
	}
	f.Revoked = revoked == "true"
	if err == nil {
		f.Limit, err = parseLimit(limit)
	}
	if err == nil && cursor != "" {
		_, err = decodeCursor(cursor)
	}
	return f, err
}

// ListGrants returns the grants of agents working for the caller's member
// (admin: every grant of the tenant), oldest first, paged; never nil.
func (s *Service) ListGrants(_ context.Context, c Caller, f GrantFilter) ([]events.Grant, string) {
	after, _ := decodeCursor(f.Cursor)
	items := []events.Grant{}
	for _, g := range s.views.TenantGrants(c.Tenant.ID) {
		if string(g.ID) > after && s.grantVisible(c, &g) && f.match(&g) {
			items = append(items, g)
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	if len(items) <= f.Limit {
		return items, ""
	}
	items = items[:f.Limit]
	return items, encodeCursor(string(items[len(items)-1].ID))
}

func (f *GrantFilter) match(g *events.Grant) bool {
	return (f.Agent == "" || string(g.Agent) == f.Agent) && (f.Effect == "" || g.Effect == f.Effect) &&
		(f.Scope == "" || g.Scope == f.Scope) && (f.Revoked || g.RevokedAt == nil)
}

func (s *Service) grantVisible(c Caller, g *events.Grant) bool {
	if c.Admin() {
		return true
	}
	a, ok := s.views.Agent(c.Tenant.ID, g.Agent)
	return ok && a.Member == s.memberOf(c) && a.Member != ""
}

// RevokeGrant revokes a grant the caller may see; it stops matching at
// once. The member's person and admin revoke any; an agent only an allow
// grant of a descendant (SPEC §5). Errors: ErrGrantNotFound, ErrForbidden,
// ErrConflict, ErrUnavailable.
func (s *Service) RevokeGrant(ctx context.Context, c Caller, id events.GrantID) (events.Grant, error) {
	if !events.ValidGeneratedID(string(id)) {
		return events.Grant{}, ErrGrantNotFound
	}
	g, _, err := s.store.GetGrant(ctx, c.Tenant.ID, id)
	if err != nil {
		return g, stateErr(err, ErrGrantNotFound)
	}
	if !s.grantVisible(c, &g) {
		return events.Grant{}, ErrGrantNotFound
	}
	if err := s.mayRevoke(c, &g); err != nil {
		return events.Grant{}, err
	}
	g, rev, err := s.store.RevokeGrant(ctx, c.Tenant.ID, id, s.now())
	if err != nil {
		return g, stateErr(err, ErrGrantNotFound)
	}
	s.views.GrantMirror().Apply(kvstate.GrantKey(c.Tenant.ID, id), g, rev)
	return g, nil
}
