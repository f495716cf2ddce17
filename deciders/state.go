package deciders

import (
	"github.com/countersign/countersign/domain"
)

// State is what the check order reads of a tenant's agents and grants:
// the live views (*views.Views) on a submit, or the state rebuilt from the
// audit log when a policy is replayed (SPEC §16). Both answer from memory;
// neither call does I/O.
type State interface {
	// Agent returns a tenant's agent, if it is known.
	Agent(tenant domain.TenantID, id domain.AgentID) (*domain.Agent, bool)
	// GrantsOf returns every grant of one agent, revoked ones too.
	GrantsOf(tenant domain.TenantID, agent domain.AgentID) []domain.Grant
}
