package approvals

import (
	"context"
	"strings"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// RuleInput is the body of POST /v1/agents/{id}/rules.
type RuleInput struct {
	Text   string `json:"text"`
	Effect string `json:"effect,omitempty"`
}

// maxRuleText bounds a rule's text in bytes, through the rules API and
// with an answer alike (SPEC §5).
const maxRuleText = 4096

// checkRuleText holds a rule's text, given in field, to the limits of
// every rule: not blank, at most maxRuleText bytes.
func checkRuleText(field, text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return invalid(field, "%s must not be blank", field)
	case len(text) > maxRuleText:
		return invalid(field, "a rule is at most %d bytes", maxRuleText)
	}
	return nil
}

func (in *RuleInput) validate() error {
	if err := checkRuleText("text", in.Text); err != nil {
		return err
	}
	if in.Effect != "" && in.Effect != domain.EffectAllow && in.Effect != domain.EffectDeny {
		return invalid("effect", "effect must be allow or deny")
	}
	return nil
}

// keepRule keeps the rule text of an answer for the requesting agent; an
// agent's answer keeps it only with effect deny (SPEC §5).
func (s *Service) keepRule(ctx context.Context, c Caller, r *domain.Request, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	_, err := s.addRule(ctx, c, r.Agent, RuleInput{Text: text, Effect: ruleEffect(c)})
	return err
}

func (s *Service) addRule(ctx context.Context, c Caller, agent domain.AgentID, in RuleInput) (domain.Rule, error) {
	rule := domain.Rule{ID: domain.NewRuleID(), Tenant: c.Tenant.ID, Agent: agent, Text: in.Text, Effect: in.Effect,
		CreatedBy: c.Principal, CreatedAt: s.now().UTC()}
	if err := s.store.PutRule(ctx, c.Tenant.ID, &rule); err != nil {
		return rule, stateErr(err, ErrUnavailable)
	}
	s.views.RuleMirror().Apply(kvstate.RuleKey(c.Tenant.ID, agent, rule.ID), rule, 0)
	return rule, nil
}

// RulesFor returns an agent's configured rules, then its kept rules.
func (s *Service) RulesFor(t *domain.Tenant, agent domain.AgentID) []domain.Rule {
	return Rules(s.views)(t, agent)
}

// Rules returns what RulesFor returns, read from views: the deciders'
// Checker.Rules, given before the Service exists.
func Rules(vw *views.Views) func(*domain.Tenant, domain.AgentID) []domain.Rule {
	return func(t *domain.Tenant, agent domain.AgentID) []domain.Rule { return rulesOf(vw, t, agent) }
}

func rulesOf(vw *views.Views, t *domain.Tenant, agent domain.AgentID) []domain.Rule {
	return append(ConfiguredRules(t, agent), vw.RulesOf(t.ID, agent)...)
}

// ConfiguredRules returns the rules t's config file gives agent, each with
// its derived id; the kept rules (POST /v1/agents/{id}/rules) follow them.
func ConfiguredRules(t *domain.Tenant, agent domain.AgentID) []domain.Rule {
	var out []domain.Rule
	if a, ok := t.Agents[agent]; ok {
		for _, text := range a.Rules {
			out = append(out, domain.Rule{ID: domain.DerivedRuleID(agent, text), Tenant: t.ID, Agent: agent, Text: text,
				CreatedBy: domain.Ref{Kind: domain.KindService, ID: "config"}})
		}
	}
	return out
}

// agentFor returns an agent whose rules the caller may see: one working for
// the caller's member (admin: any in the tenant). ErrOtherNotFound else.
func (s *Service) agentFor(c Caller, id domain.AgentID) (*domain.Agent, error) {
	a, ok := s.views.Agent(c.Tenant.ID, id)
	if !ok || (!c.Admin() && (a.Member == "" || a.Member != s.memberOf(c))) {
		return nil, ErrOtherNotFound
	}
	return a, nil
}

// ListRules returns an agent's rules. Errors: ErrOtherNotFound.
func (s *Service) ListRules(_ context.Context, c Caller, agent domain.AgentID) ([]domain.Rule, error) {
	if _, err := s.agentFor(c, agent); err != nil {
		return nil, err
	}
	rules := s.RulesFor(c.Tenant, agent)
	if rules == nil {
		rules = []domain.Rule{}
	}
	return rules, nil
}

// AddRule keeps a new rule for an agent. The member's person and admin
// add any rule; an agent only a rule with effect deny for one of its
// descendants (SPEC §5). Errors: InvalidRequest, ErrOtherNotFound,
// ErrForbidden, ErrUnavailable.
func (s *Service) AddRule(ctx context.Context, c Caller, agent domain.AgentID, in RuleInput) (domain.Rule, error) {
	if err := in.validate(); err != nil {
		return domain.Rule{}, err
	}
	if _, err := s.agentFor(c, agent); err != nil {
		return domain.Rule{}, err
	}
	if err := s.mayAddRule(c, agent, in.Effect); err != nil {
		return domain.Rule{}, err
	}
	return s.addRule(ctx, c, agent, in)
}

// DeleteRule removes a kept rule (configured rules live in the config).
// The member's person and admin delete any; an agent only a deny rule it
// added, on a descendant (SPEC §5). Errors: ErrOtherNotFound,
// ErrForbidden, ErrUnavailable.
func (s *Service) DeleteRule(ctx context.Context, c Caller, agent domain.AgentID, id domain.RuleID) error {
	if _, err := s.agentFor(c, agent); err != nil {
		return err
	}
	for _, r := range s.RulesFor(c.Tenant, agent) {
		if r.ID == id && r.CreatedBy.Kind == domain.KindService {
			return forbid("configured rules are changed in the config file")
		}
	}
	if !domain.ValidGeneratedID(string(id)) {
		return ErrOtherNotFound
	}
	rule, err := s.store.GetRule(ctx, c.Tenant.ID, agent, id)
	if err != nil {
		return stateErr(err, ErrOtherNotFound)
	}
	if err := s.mayDeleteRule(c, &rule); err != nil {
		return err
	}
	if err := s.store.DeleteRule(ctx, c.Tenant.ID, agent, id); err != nil {
		return stateErr(err, ErrOtherNotFound)
	}
	s.views.RuleMirror().Forget(kvstate.RuleKey(c.Tenant.ID, agent, id))
	return nil
}
