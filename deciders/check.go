package deciders

import (
	"context"

	"github.com/countersign/countersign/domain"
)

// Verdict is what steps 1–4 of the check order concluded about a request.
type Verdict struct {
	// Decided is true when steps 1–4 decided; then Status and By are set.
	Decided    bool
	Status     domain.Status
	By         domain.Ref
	QuotedRule string
	// Note says why, when the rule that decided is not plain from By (a
	// delegation that would cross members).
	Note string
	// JudgeEscalated is true when the judge read the rules and did not
	// decide; ReviewerReason is its bounded display line, if any.
	JudgeEscalated bool
	ReviewerReason string
}

// RulesJudge reads an agent's rules against a request (SPEC §6). It returns
// a verified allow or deny, or Escalate for anything else.
type RulesJudge interface {
	JudgeRules(ctx context.Context, tenant *domain.Tenant, rules []domain.Rule, r *domain.Request) JudgeResult
}

// JudgeResult is a RulesJudge's answer; Verdict is "allow", "deny" or
// "escalate".
type JudgeResult struct {
	Verdict        string
	RuleID         domain.RuleID
	Quote          string
	ReviewerReason string
}

// Checker runs the check order against the views (or any State). Build
// it with NewChecker, which validates its config; its fields are what
// CheckerConfig holds.
type Checker struct {
	views   State
	judge   RulesJudge                                                      // nil: step 4 is skipped
	rulesOf func(tenant *domain.Tenant, agent domain.AgentID) []domain.Rule // nil: no rules
}

// Check runs steps 1–4 for r (SPEC §2); an unknown subject kind or a
// protected write stops after step 1. Step 1 is the member's policy and
// then the bar on delegation across members (DelegationBar), which reads
// r.Chain: r's chain must be set. r.Agent must exist in tenant.
func (c *Checker) Check(ctx context.Context, t *domain.Tenant, r *domain.Request) Verdict {
	agent, _ := c.views.Agent(t.ID, r.Agent)
	capStr := r.Capability.String()
	if m := t.Members[agent.Member]; m == nil || !m.Policy.Permits(capStr) {
		return Verdict{Decided: true, Status: domain.StatusDenied, By: domain.Ref{Kind: domain.KindPolicy, ID: string(agent.Member)}}
	}
	if note := delegationBar(c.views, t, r); note != "" {
		return Verdict{Decided: true, Status: domain.StatusDenied, By: domain.Ref{Kind: domain.KindPolicy, ID: string(agent.Member)}, Note: note}
	}
	if !KnownSubject(r.Subject.Kind) || r.Subject.ProtectedWrite { // a decider answers while a client watches (SPEC §8)
		return Verdict{}
	}
	if p, ok := readRule(t, r); ok {
		return Verdict{Decided: true, Status: domain.StatusApproved, By: domain.Ref{Kind: domain.KindRead, ID: p}}
	}
	if c.ownSubagent(t, r) {
		return Verdict{Decided: true, Status: domain.StatusApproved, By: domain.Ref{Kind: domain.KindOwnSubagent, ID: r.Capability.Target}}
	}
	if v, ok := c.grants(t, r); ok {
		return v
	}
	return c.rules(ctx, t, r)
}

// readRule returns the read rule r's capability matches (step 2). A shell
// request with an opaque stage is never a read (SPEC §8).
func readRule(t *domain.Tenant, r *domain.Request) (string, bool) {
	for _, st := range r.Stages {
		if st.Opaque != "" {
			return "", false
		}
	}
	return domain.MatchAny(t.ReadRules, r.Capability.String())
}

// grants is step 3. A shell request is covered stage by stage: a deny
// grant on any stage denies it; each stage an allow grant covers is marked
// allowed on r, and the request is decided only when every stage is.
func (c *Checker) grants(t *domain.Tenant, r *domain.Request) (Verdict, bool) {
	if r.Subject.Kind != domain.SubjectShell {
		g, ok := c.grantFor(t.ID, r.Agent, r, 0)
		return grantVerdict(g), ok
	}
	covered := make([]domain.Grant, len(r.Stages))
	for i := range r.Stages {
		g, ok := c.grantFor(t.ID, r.Agent, r, i)
		if ok && g.Effect == domain.EffectDeny {
			return grantVerdict(g), true
		}
		covered[i] = g
	}
	var first domain.Grant
	for i, g := range covered {
		if g.ID == "" {
			continue
		}
		if first.ID == "" {
			first = g
		}
		r.AllowStageAt(i, domain.Ref{Kind: domain.KindGrant, ID: string(g.ID)}, domain.ScopeOnce, r.CreatedAt)
	}
	return grantVerdict(first), len(r.Stages) > 0 && r.CurrentStage == len(r.Stages)
}

func grantVerdict(g domain.Grant) Verdict {
	st := domain.StatusApproved
	if g.Effect == domain.EffectDeny {
		st = domain.StatusDenied
	}
	return Verdict{Decided: true, Status: st, By: domain.Ref{Kind: domain.KindGrant, ID: string(g.ID)}}
}

// KnownSubject reports whether kind is a subject kind known in v1; any
// other kind skips steps 2–4 and is answerable only with scope once.
func KnownSubject(kind string) bool {
	return kind == domain.SubjectTool || kind == domain.SubjectShell
}

func (c *Checker) ownSubagent(t *domain.Tenant, r *domain.Request) bool {
	if r.Capability.Action != domain.ActionAgentsDelegate {
		return false
	}
	sub, ok := c.views.Agent(t.ID, domain.AgentID(r.Capability.Target))
	return ok && sub.Registered && sub.Parent == r.Agent && sub.RetiredAt == nil
}

// grantFor returns the grant of agent that decides r (a shell request: its
// stage at index stage): a deny grant wins over an allow grant, a lifetime
// allow over a session one.
func (c *Checker) grantFor(tenant domain.TenantID, agent domain.AgentID, r *domain.Request, stage int) (domain.Grant, bool) {
	var allow *domain.Grant
	for _, g := range c.views.GrantsOf(tenant, agent) {
		if !g.Covers(r, stage) {
			continue
		}
		if g.Effect == domain.EffectDeny {
			return g, true
		}
		if allow == nil || g.Scope == domain.ScopeLifetime {
			g := g
			allow = &g
		}
	}
	if allow == nil {
		return domain.Grant{}, false
	}
	return *allow, true
}

func (c *Checker) rules(ctx context.Context, t *domain.Tenant, r *domain.Request) Verdict {
	if c.judge == nil || t.Judge == nil || c.rulesOf == nil {
		return Verdict{}
	}
	rules := c.rulesOf(t, r.Agent)
	if len(rules) == 0 {
		return Verdict{}
	}
	ctx, cancel := context.WithDeadline(ctx, r.DeadlineAt)
	defer cancel()
	res := c.judge.JudgeRules(ctx, t, rules, r)
	switch res.Verdict {
	case domain.EffectAllow, domain.EffectDeny:
		st := domain.StatusApproved
		if res.Verdict == domain.EffectDeny {
			st = domain.StatusDenied
		}
		return Verdict{Decided: true, Status: st, By: domain.Ref{Kind: domain.KindRule, ID: string(res.RuleID)}, QuotedRule: res.Quote}
	}
	return Verdict{JudgeEscalated: true, ReviewerReason: res.ReviewerReason}
}
