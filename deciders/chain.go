package deciders

import (
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/views"
)

// Chain returns an agent's ancestry, top first, the agent last. A broken
// parent link (which config validation prevents) ends the chain.
func Chain(v *views.Views, tenant domain.TenantID, agent domain.AgentID) []domain.AgentID {
	var rev []domain.AgentID
	seen := map[domain.AgentID]bool{}
	for id := agent; id != "" && !seen[id]; {
		seen[id] = true
		rev = append(rev, id)
		a, ok := v.Agent(tenant, id)
		if !ok {
			break
		}
		id = a.Parent
	}
	out := make([]domain.AgentID, len(rev))
	for i, id := range rev {
		out[len(rev)-1-i] = id
	}
	return out
}

// Above returns the decider above agent: its parent agent or, at the top,
// its member.
func Above(v State, tenant domain.TenantID, agent domain.AgentID) domain.Ref {
	a, ok := v.Agent(tenant, agent)
	if !ok {
		return domain.Ref{}
	}
	if a.Parent != "" {
		return domain.Ref{Kind: domain.KindAgent, ID: string(a.Parent)}
	}
	return domain.Ref{Kind: domain.KindPerson, ID: string(a.Member)}
}

// Holds reports whether decider d holds r's capability (SPEC §3), and the
// largest scope d may give. A person holds what their policy allows; an
// agent when its member's policy allows, none of its deny grants match, and
// it has a lifetime allow grant (any scope), a session allow grant for r's
// session (at most session), or the capability is a read. For a shell
// request the grants are those covering its current stage (SPEC §8): no
// agent holds an opaque stage.
func (c *Checker) Holds(t *domain.Tenant, d domain.Ref, r *domain.Request) (bool, string) {
	capStr := r.Capability.String()
	if d.Kind == domain.KindPerson {
		m := t.Members[domain.MemberID(d.ID)]
		return m != nil && m.Policy.Permits(capStr), domain.ScopeLifetime
	}
	a, ok := c.views.Agent(t.ID, domain.AgentID(d.ID))
	if !ok || t.Members[a.Member] == nil || !t.Members[a.Member].Policy.Permits(capStr) {
		return false, ""
	}
	g, ok := c.grantFor(t.ID, a.ID, r, r.CurrentStage)
	switch {
	case ok && g.Effect == domain.EffectDeny:
		return false, ""
	case ok && g.Scope == domain.ScopeLifetime:
		return true, domain.ScopeLifetime
	case ok:
		return true, domain.ScopeSession
	}
	if _, read := readRule(t, r); read {
		return true, domain.ScopeLifetime
	}
	return false, ""
}
