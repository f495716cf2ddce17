package deciders

import (
	"github.com/countersign/countersign/domain"
)

// Authority never crosses members (SPEC §3): agents.delegate:B by A is
// denied by policy at check step 1 when B works for another member than A,
// when B is A, or when B is one of A's ancestors in the chain A works in.
// Which member an agent works for is its registration's (the config's, or
// the parent's for a subagent), never anything a request says.

// DelegationBar returns why delegating work from delegator to agent is
// barred, or "" when it is not; chain is the delegator's chain in the
// session (ChainFor), the delegator last. An agent the views do not hold
// is barred: it works for no member the delegator works for.
func DelegationBar(v State, tenant domain.TenantID, delegator, agent domain.AgentID, chain []domain.AgentID) string {
	if agent == delegator {
		return "authority never crosses members: an agent cannot delegate work to itself"
	}
	for _, up := range chain {
		if up == agent {
			return "authority never crosses members: " + string(agent) + " is above " + string(delegator) + " in its chain"
		}
	}
	if !sameMember(v, tenant, delegator, agent) {
		return "authority never crosses members: " + string(agent) + " works for another member than " + string(delegator)
	}
	return ""
}

// delegationBar is DelegationBar for a submitted agents.delegate request,
// whose chain is its requester's in its session; "" for any other request.
func delegationBar(v State, t *domain.Tenant, r *domain.Request) string {
	if r.Capability.Action != domain.ActionAgentsDelegate {
		return ""
	}
	return DelegationBar(v, t.ID, r.Agent, domain.AgentID(r.Capability.Target), r.Chain)
}
