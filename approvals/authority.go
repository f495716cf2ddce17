package approvals

import (
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// SPEC §5 "Authority flows down": an agent may restrict its descendants,
// never loosen anything for itself or for an agent above it. Loosening
// (adding an allow rule, deleting a deny rule, revoking a deny grant) takes
// the member's person or admin.

// mayLoosen reports whether c may loosen an agent's limits: admin, or a
// person (callers that reach here see the agent, so it is their member's).
func mayLoosen(c Caller) bool {
	return c.Admin() || c.Principal.Kind == domain.KindPerson
}

// below reports whether agent is a strict descendant of the calling agent.
func (s *Service) below(c Caller, agent domain.AgentID) bool {
	if c.Principal.Kind != domain.KindAgent {
		return false
	}
	chain := deciders.Chain(s.views, c.Tenant.ID, agent)
	if len(chain) == 0 {
		return false
	}
	for _, id := range chain[:len(chain)-1] {
		if string(id) == c.Principal.ID {
			return true
		}
	}
	return false
}

var (
	errNotBelow   = forbid("an agent may restrict only its descendants, never itself or an agent above it")
	errLoosens    = forbid("this loosens an agent's limits: it takes the member's person or admin")
	errDenyOnly   = forbid("an agent may add only rules with effect deny, for its descendants; other rules take the member's person or admin")
	errNotItsRule = forbid("an agent may delete only the deny rules it added; other rules take the member's person or admin")
)

// mayAddRule: person and admin add any rule; an agent only a deny rule for
// a descendant (a rule without effect may allow, so it loosens too).
func (s *Service) mayAddRule(c Caller, agent domain.AgentID, effect string) error {
	switch {
	case mayLoosen(c):
		return nil
	case !s.below(c, agent):
		return errNotBelow
	case effect != domain.EffectDeny:
		return errDenyOnly
	}
	return nil
}

// mayDeleteRule: person and admin delete any kept rule; an agent only a
// deny rule it added itself, on a descendant.
func (s *Service) mayDeleteRule(c Caller, r *domain.Rule) error {
	switch {
	case mayLoosen(c):
		return nil
	case !s.below(c, r.Agent):
		return errNotBelow
	case r.Effect != domain.EffectDeny || r.CreatedBy != c.Principal:
		return errNotItsRule
	}
	return nil
}

// mayRevoke: person and admin revoke any grant they see; an agent only an
// allow grant of a descendant.
func (s *Service) mayRevoke(c Caller, g *domain.Grant) error {
	switch {
	case mayLoosen(c):
		return nil
	case g.Effect != domain.EffectAllow:
		return errLoosens
	case !s.below(c, g.Agent):
		return errNotBelow
	}
	return nil
}

// ruleEffect is the effect a rule given with c's answer is kept with: an
// agent's only as deny.
func ruleEffect(c Caller) string {
	if mayLoosen(c) {
		return ""
	}
	return domain.EffectDeny
}
