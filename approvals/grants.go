package approvals

import (
	"context"
	"time"

	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// grantsFrom returns the grants a request's decisions leave (SPEC §3): an
// approval of scope session or lifetime gives the requester and every
// endorser an allow grant; a deny of such scope leaves a deny grant for the
// requester only; once, or session without a session, leaves none. A shell
// request leaves its grants stage by stage (stageGrants); a request with a
// connection binds its grants to that connection revision (SPEC §8). Ids
// are derived from the request, so writing them again writes nothing new.
func grantsFrom(r *domain.Request) []domain.Grant {
	if r.Subject.Kind == domain.SubjectShell {
		return stageGrants(r)
	}
	d := r.Decision
	if d == nil || (d.Status != domain.StatusApproved && d.Status != domain.StatusDenied) || !lasting(d.By, d.Scope, r.Session) {
		return nil
	}
	agents := []domain.AgentID{r.Agent}
	effect := domain.EffectDeny
	if d.Status == domain.StatusApproved {
		effect, agents = domain.EffectAllow, grantees(r)
	}
	out := make([]domain.Grant, 0, len(agents))
	for _, a := range agents {
		out = append(out, newGrant(r, domain.DerivedGrantID(r.ID, a, d.DecidedAt), a, effect, d.Scope, d.By, d.DecidedAt))
	}
	return out
}

// stageGrants returns the grants a shell request's stages leave: for each
// stage a decider allowed with a lasting scope, an allow grant of its
// prefix, or of its exact words when it has them (Stage.Argv: an
// interpreter, a command or an argument the command table does not know),
// for the requester and every endorser; for a lasting deny, a deny grant
// of the denied stage's (of its prefix when it has nothing else) for the
// requester. Each binds the call's other arguments. An allowed opaque
// stage without exact words leaves none: no grant could ever cover it.
func stageGrants(r *domain.Request) []domain.Grant {
	digest, ok := domain.ShellArgumentsDigest(r.Arguments)
	if !ok {
		return nil
	}
	var out []domain.Grant
	for i, st := range r.Stages {
		m := stageMatch(&st, digest)
		if m == nil || st.AllowedBy == nil || st.AllowedAt == nil || !lasting(*st.AllowedBy, st.Scope, r.Session) {
			continue
		}
		for _, a := range grantees(r) {
			g := newGrant(r, domain.DerivedStageGrantID(r.ID, a, i, *st.AllowedAt), a, domain.EffectAllow, st.Scope, *st.AllowedBy, *st.AllowedAt)
			g.Match = m
			out = append(out, g)
		}
	}
	d, i := r.Decision, r.CurrentStage
	if d != nil && d.Status == domain.StatusDenied && lasting(d.By, d.Scope, r.Session) && i < len(r.Stages) {
		if m := denyMatch(&r.Stages[i], digest); m != nil {
			g := newGrant(r, domain.DerivedStageGrantID(r.ID, r.Agent, i, d.DecidedAt), r.Agent, domain.EffectDeny, d.Scope, d.By, d.DecidedAt)
			g.Match = m
			out = append(out, g)
		}
	}
	return out
}

// stageMatch is what a grant of st matches: its exact words when it has
// them, else its prefix when it is not opaque; nil when no grant may
// cover it.
func stageMatch(st *domain.Stage, digest string) *domain.GrantMatch {
	switch {
	case st.Argv != nil:
		return &domain.GrantMatch{ShellArgv: st.Argv, ArgumentsDigest: digest}
	case st.Opaque == "":
		return &domain.GrantMatch{ShellPrefix: st.Prefix, ArgumentsDigest: digest}
	}
	return nil
}

// denyMatch is what a deny grant of st matches: what an allow's would,
// else its prefix, which a deny grant matches on any stage (opaque or not).
func denyMatch(st *domain.Stage, digest string) *domain.GrantMatch {
	if m := stageMatch(st, digest); m != nil {
		return m
	}
	if len(st.Prefix) > 0 {
		return &domain.GrantMatch{ShellPrefix: st.Prefix, ArgumentsDigest: digest}
	}
	return nil
}

// lasting reports whether an answer by by with scope leaves grants: a
// decider's (not steps 1–4's) session or lifetime answer, session only on
// a request that has a session.
func lasting(by domain.Ref, scope, session string) bool {
	if by.Kind != domain.KindPerson && by.Kind != domain.KindAgent {
		return false
	}
	return scope == domain.ScopeLifetime || (scope == domain.ScopeSession && session != "")
}

// grantees are the agents an approval of r gives grants: the requester and
// every endorser.
func grantees(r *domain.Request) []domain.AgentID {
	agents := []domain.AgentID{r.Agent}
	for _, e := range r.Endorsements {
		agents = append(agents, e.Agent)
	}
	return agents
}

func newGrant(r *domain.Request, id domain.GrantID, agent domain.AgentID, effect, scope string, by domain.Ref, at time.Time) domain.Grant {
	g := domain.Grant{ID: id, Tenant: r.Tenant, Agent: agent, Capability: r.Capability, Connection: r.Connection,
		Effect: effect, Scope: scope, RequestID: r.ID, CreatedBy: by, CreatedAt: at}
	if scope == domain.ScopeSession {
		g.Session = r.Session
	}
	return g
}

// RepairGrants writes the grants (and the delegated work) a decided
// request r leaves, if a crash stopped its answer before it wrote them; a
// no-op otherwise, safe to repeat. The outbox calls it for each write
// that carries events.HeaderGrants (outbox.Grants).
func (s *Service) RepairGrants(ctx context.Context, r *domain.Request) error {
	return s.ensureGrants(ctx, r)
}

// ensureGrants writes the grants (and the delegated work, delegation.go) a
// decided request leaves and puts them in force in this process at once.
// Safe to repeat.
func (s *Service) ensureGrants(ctx context.Context, r *domain.Request) error {
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
	return s.ensureDelegation(ctx, r)
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
	case effect != "" && effect != domain.EffectAllow && effect != domain.EffectDeny:
		err = invalid("effect", "effect must be allow or deny")
	case scope != "" && scope != domain.ScopeSession && scope != domain.ScopeLifetime:
		err = invalid("scope", "scope must be session or lifetime")
	case revoked != "" && revoked != "true" && revoked != "false":
		err = invalid("revoked", "revoked must be true or false")
	}
	f.Revoked = revoked == "true"
	if err == nil {
		f.Limit, err = parseLimit(limit)
	}
	if err == nil && cursor != "" {
		_, err = wire.CursorID(cursor)
	}
	return f, err
}

// ListGrants returns the grants of agents working for the caller's member
// (admin: every grant of the tenant), oldest first, paged; never nil.
func (s *Service) ListGrants(_ context.Context, c Caller, f GrantFilter) ([]domain.Grant, string) {
	after, _ := wire.CursorID(f.Cursor)
	return pageOf(f.Limit, func(yield func(string, domain.Grant) bool) {
		s.views.ScanGrants(c.Tenant.ID, after, func(g *domain.Grant) bool {
			if !s.grantVisible(c, g) || !f.match(g) {
				return true
			}
			return yield(string(g.ID), *g)
		})
	})
}

func (f *GrantFilter) match(g *domain.Grant) bool {
	return (f.Agent == "" || string(g.Agent) == f.Agent) && (f.Effect == "" || g.Effect == f.Effect) &&
		(f.Scope == "" || g.Scope == f.Scope) && (f.Revoked || g.RevokedAt == nil)
}

func (s *Service) grantVisible(c Caller, g *domain.Grant) bool {
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
func (s *Service) RevokeGrant(ctx context.Context, c Caller, id domain.GrantID) (domain.Grant, error) {
	if !domain.ValidGeneratedID(string(id)) {
		return domain.Grant{}, ErrGrantNotFound
	}
	g, _, err := s.store.GetGrant(ctx, c.Tenant.ID, id)
	if err != nil {
		return g, stateErr(err, ErrGrantNotFound)
	}
	if !s.grantVisible(c, &g) {
		return domain.Grant{}, ErrGrantNotFound
	}
	if err := s.mayRevoke(c, &g); err != nil {
		return domain.Grant{}, err
	}
	g, rev, err := s.store.RevokeGrant(ctx, c.Tenant.ID, id, s.now())
	if err != nil {
		return g, stateErr(err, ErrGrantNotFound)
	}
	s.views.GrantMirror().Apply(kvstate.GrantKey(c.Tenant.ID, id), g, rev)
	return g, nil
}
