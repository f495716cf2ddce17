package replay

import (
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// history is what the log says of a tenant's agents, grants and kept
// rules, each with the times it came and went.
type history struct {
	agents map[domain.AgentID]*agentSpan
	grants map[domain.AgentID][]domain.Grant
	index  map[domain.GrantID]int // into grants[agent]
	rules  map[domain.AgentID][]ruleSpan
}

type agentSpan struct {
	agent     domain.Agent
	removedAt *time.Time
}

type ruleSpan struct {
	rule      domain.Rule
	from      time.Time
	deletedAt *time.Time
}

func newHistory() *history {
	return &history{agents: map[domain.AgentID]*agentSpan{}, grants: map[domain.AgentID][]domain.Grant{},
		index: map[domain.GrantID]int{}, rules: map[domain.AgentID][]ruleSpan{}}
}

// grant keeps g's latest record (a revocation replaces its creation).
func (h *history) grant(g domain.Grant) {
	if i, ok := h.index[g.ID]; ok {
		h.grants[g.Agent][i] = g
		return
	}
	h.index[g.ID] = len(h.grants[g.Agent])
	h.grants[g.Agent] = append(h.grants[g.Agent], g)
}

// at is the state the check order read when a request was created at t:
// the candidate's configured agents, then the registered ones alive at t;
// the grants made by t and not revoked by then.
type at struct {
	h      *history
	tenant *domain.Tenant
	t      time.Time
}

var _ deciders.State = at{}

func (s at) Agent(_ domain.TenantID, id domain.AgentID) (*domain.Agent, bool) {
	if a, ok := s.tenant.Agents[id]; ok {
		return a, true
	}
	sp, ok := s.h.agents[id]
	if !ok || sp.agent.CreatedAt.After(s.t) || (sp.removedAt != nil && !sp.removedAt.After(s.t)) {
		return nil, false
	}
	a := sp.agent
	if a.RetiredAt != nil && a.RetiredAt.After(s.t) {
		a.RetiredAt = nil
	}
	return &a, true
}

func (s at) GrantsOf(_ domain.TenantID, agent domain.AgentID) []domain.Grant {
	var out []domain.Grant
	for _, g := range s.h.grants[agent] {
		if g.CreatedAt.After(s.t) {
			continue
		}
		if g.RevokedAt != nil && g.RevokedAt.After(s.t) {
			g.RevokedAt = nil
		}
		out = append(out, g)
	}
	return out
}

// keptRules are agent's kept rules in force at s.t.
func (s at) keptRules(agent domain.AgentID) []domain.Rule {
	var out []domain.Rule
	for _, r := range s.h.rules[agent] {
		if !r.from.After(s.t) && (r.deletedAt == nil || r.deletedAt.After(s.t)) {
			out = append(out, r.rule)
		}
	}
	return out
}
