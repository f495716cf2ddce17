package deciders

import (
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/views"
)

// Chain returns an agent's ancestry, top first, the agent last. A broken
// parent link (which config validation prevents) ends the chain.
func Chain(v *views.Views, tenant events.TenantID, agent events.AgentID) []events.AgentID {
	var rev []events.AgentID
	seen := map[events.AgentID]bool{}
	for id := agent; id != "" && !seen[id]; {
		seen[id] = true
		rev = append(rev, id)
		a, ok := v.Agent(tenant, id)
		if !ok {
			break
		}
		id = a.Parent
	}
	out := make([]events.AgentID, len(rev))
	for i, id := range rev {
		out[len(rev)-1-i] = id
	}
	return out
}

// Above returns the decider above agent: its parent agent or, at the top,
// its member.
func Above(v State, tenant events.TenantID, agent events.AgentID) events.Ref {
	a, ok := v.Agent(tenant, agent)
	if !ok {
		return events.Ref{}
	}
	if a.Parent != "" {
		return events.Ref{Kind: events.KindAgent, ID: string(a.Parent)}
	}
	return events.Ref{Kind: events.KindPerson, ID: string(a.Member)}
}

// Holds reports whether decider d holds r's capability (SPEC §3), and the
// largest scope d may give. A person holds what their policy allows; an
// agent when its member's policy allows, none of its deny grants match, and
// it has a lifetime allow grant (any scope), a session allow grant for r's
// session (at most session), or the capability is a read. For a shell
// request the grants are those covering its current stage (SPEC §8): no
// agent holds an opaque stage.
func (c *Checker) Holds(t *events.Tenant, d events.Ref, r *events.Request) (bool, string) {
	capStr := r.Capability.String()
	if d.Kind == events.KindPerson {
		m := t.Members[events.MemberID(d.ID)]
		return m != nil && m.Policy.Permits(capStr), events.ScopeLifetime
	}
	a, ok := c.Views.Agent(t.ID, events.AgentID(d.ID))
	if !ok || t.Members[a.Member] == nil || !t.Members[a.Member].Policy.Permits(capStr) {
		return false, ""
	}
	g, ok := c.grantFor(t.ID, a.ID, r, r.CurrentStage)
	switch {
	case ok && g.Effect == events.EffectDeny:
		return false, ""
	case ok && g.Scope == events.ScopeLifetime:
		return true, events.ScopeLifetime
	case ok:
		return true, events.ScopeSession
	}
	if _, read := readRule(t, r); read {
		return true, events.ScopeLifetime
	}
	return false, ""
}
