package deciders

import (
	"context"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// Verdict is what steps 1–4 of the check order concluded about a request.
type Verdict struct {
	// Decided is true when steps 1–4 decided; then Status and By are set.
	Decided    bool
	Status     events.Status
	By         events.Ref
	QuotedRule string
	// JudgeEscalated is true when the judge read the rules and did not
	// decide; ReviewerReason is its bounded display line, if any.
	JudgeEscalated bool
	ReviewerReason string
}

// RulesJudge reads an agent's rules against a request (SPEC §6). It returns
// a verified allow or deny, or Escalate for anything else.
type RulesJudge interface {
	JudgeRules(ctx context.Context, tenant *events.Tenant, rules []events.Rule, r *events.Request) JudgeResult
}

// JudgeResult is a RulesJudge's answer; Verdict is "allow", "deny" or
// "escalate".
type JudgeResult struct {
	Verdict        string
	RuleID         events.RuleID
	Quote          string
	ReviewerReason string
}

// Checker runs the check order against the views.
type Checker struct {
	Views *kvstate.Views
	// Judge, if set, is consulted at step 4 for tenants that have a judge.
	Judge RulesJudge
	// Rules returns an agent's rules (configured and kept); nil: none.
	Rules func(tenant *events.Tenant, agent events.AgentID) []events.Rule
}

// Check runs steps 1–4 for r (SPEC §2). r.Agent must exist in tenant.
func (c *Checker) Check(ctx context.Context, t *events.Tenant, r *events.Request) Verdict {
	agent, _ := c.Views.Agent(t.ID, r.Agent)
	capStr := r.Capability.String()
	if m := t.Members[agent.Member]; m == nil || !m.Policy.Permits(capStr) {
		return Verdict{Decided: true, Status: events.StatusDenied, By: events.Ref{Kind: events.KindPolicy, ID: string(agent.Member)}}
	}
	if !KnownSubject(r.Subject.Kind) {
		return Verdict{}
	}
	if p, ok := events.MatchAny(t.ReadRules, capStr); ok {
		return Verdict{Decided: true, Status: events.StatusApproved, By: events.Ref{Kind: events.KindRead, ID: p}}
	}
	if c.ownSubagent(t, r) {
		return Verdict{Decided: true, Status: events.StatusApproved, By: events.Ref{Kind: events.KindOwnSubagent, ID: r.Capability.Target}}
	}
	if g, ok := c.grantFor(t.ID, r.Agent, r.Capability, r.Session); ok {
		st := events.StatusApproved
		if g.Effect == events.EffectDeny {
			st = events.StatusDenied
		}
		return Verdict{Decided: true, Status: st, By: events.Ref{Kind: events.KindGrant, ID: string(g.ID)}}
	}
	return c.rules(ctx, t, r)
}

// KnownSubject reports whether kind is a subject kind known in v1; any
// other kind skips steps 2–4 and is answerable only with scope once.
func KnownSubject(kind string) bool {
	return kind == events.SubjectTool || kind == events.SubjectShell
}

func (c *Checker) ownSubagent(t *events.Tenant, r *events.Request) bool {
	if r.Capability.Action != events.ActionAgentsDelegate {
		return false
	}
	sub, ok := c.Views.Agent(t.ID, events.AgentID(r.Capability.Target))
	return ok && sub.Registered && sub.Parent == r.Agent && sub.RetiredAt == nil
}

// grantFor returns the grant that decides capability c for agent in
// session: a deny grant wins over an allow grant.
func (c *Checker) grantFor(tenant events.TenantID, agent events.AgentID, capability events.Capability, session string) (events.Grant, bool) {
	var allow *events.Grant
	for _, g := range c.Views.GrantsOf(tenant, agent) {
		if !g.Applies(capability, session) {
			continue
		}
		if g.Effect == events.EffectDeny {
			return g, true
		}
		if allow == nil || g.Scope == events.ScopeLifetime {
			g := g
			allow = &g
		}
	}
	if allow == nil {
		return events.Grant{}, false
	}
	return *allow, true
}

func (c *Checker) rules(ctx context.Context, t *events.Tenant, r *events.Request) Verdict {
	if c.Judge == nil || t.Judge == nil || c.Rules == nil {
		return Verdict{}
	}
	rules := c.Rules(t, r.Agent)
	if len(rules) == 0 {
		return Verdict{}
	}
	ctx, cancel := context.WithDeadline(ctx, r.DeadlineAt)
	defer cancel()
	res := c.Judge.JudgeRules(ctx, t, rules, r)
	switch res.Verdict {
	case events.EffectAllow, events.EffectDeny:
		st := events.StatusApproved
		if res.Verdict == events.EffectDeny {
			st = events.StatusDenied
		}
		return Verdict{Decided: true, Status: st, By: events.Ref{Kind: events.KindRule, ID: string(res.RuleID)}, QuotedRule: res.Quote}
	}
	return Verdict{JudgeEscalated: true, ReviewerReason: res.ReviewerReason}
}
