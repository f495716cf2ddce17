package deciders

import (
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/views"
)

// ChainFor returns the chain of a new request of agent in session (SPEC
// §3): in delegated work, the delegator's chain and then agent; otherwise
// agent's own ancestry (Chain).
func ChainFor(v *views.Views, tenant domain.TenantID, agent domain.AgentID, session string) []domain.AgentID {
	if d, ok := ActiveDelegation(v, tenant, agent, session); ok {
		return append(Chain(v, tenant, d.Delegator), agent)
	}
	return Chain(v, tenant, agent)
}

// ActiveDelegation returns agent's delegated work in session, if it is in
// force: not ended, neither agent nor its delegator retired, and both
// working for one member (a config reload may move a configured agent:
// authority never crosses members, SPEC §3).
func ActiveDelegation(v *views.Views, tenant domain.TenantID, agent domain.AgentID, session string) (domain.Delegation, bool) {
	if session == "" {
		return domain.Delegation{}, false
	}
	d, ok := v.Delegation(tenant, agent, session)
	if !ok || !d.Active() || v.Retired(tenant, agent) || v.Retired(tenant, d.Delegator) || !sameMember(v, tenant, agent, d.Delegator) {
		return domain.Delegation{}, false
	}
	return d, true
}

// sameMember reports whether agents a and b both work for one member.
func sameMember(v State, tenant domain.TenantID, a, b domain.AgentID) bool {
	x, ok1 := v.Agent(tenant, a)
	y, ok2 := v.Agent(tenant, b)
	return ok1 && ok2 && x.Member == y.Member
}

// Next returns the decider above from in a request's recorded chain (kept
// in the record since it was made: neither a config reload nor a later
// delegation moves a pending request): the agent before it or, above the
// chain's top agent, that agent's member.
// The chain's last link (the requester) is passed over when looking from
// above, so that an agent in the chain twice decides at its higher place.
// A from not in chain (or no chain) falls back to Above.
func Next(v State, tenant domain.TenantID, chain []domain.AgentID, from domain.AgentID) domain.Ref {
	i := len(chain) - 1
	if i < 0 || chain[i] != from {
		for i = len(chain) - 2; i >= 0 && chain[i] != from; i-- {
		}
	}
	switch {
	case i < 0:
		return Above(v, tenant, from)
	case i > 0:
		return domain.Ref{Kind: domain.KindAgent, ID: string(chain[i-1])}
	}
	top, ok := v.Agent(tenant, chain[0])
	if !ok {
		return domain.Ref{}
	}
	return domain.Ref{Kind: domain.KindPerson, ID: string(top.Member)}
}

// BriefOf returns, for NewReviewBundle, the brief each agent of r's chain
// was given: a requester in delegated work was given its delegator's brief
// (SPEC §3: what A gave B, kept on the delegation even after it ended);
// any other agent, its own brief.
func BriefOf(v *views.Views, r *domain.Request) func(domain.AgentID) string {
	return func(id domain.AgentID) string {
		if d, ok := v.Delegation(r.Tenant, id, r.Session); ok && id == r.Agent && r.Session != "" &&
			len(r.Chain) > 1 && d.Delegator == r.Chain[len(r.Chain)-2] && !d.ApprovedAt.After(r.CreatedAt) {
			return d.Brief
		}
		if a, ok := v.Agent(r.Tenant, id); ok {
			return a.Brief
		}
		return ""
	}
}
