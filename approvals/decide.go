package approvals

import (
	"context"
	"slices"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// Decide runs the check order on a new request r, as Submit does (SPEC
// §2): the token's policy (tokenPolicy; nil when the token has none),
// steps 1–4 (chk), and, when they do not decide, the routing at the top
// of r's recorded chain (approver, group, required_approvals). It changes
// r only and does no I/O beyond chk's judge, if it has one: a policy
// replay (SPEC §16) calls it on a request rebuilt from the audit log, with
// a State rebuilt from the same log. With rules in shadow mode, r.Shadow
// says what each would have done (shadows).
func Decide(ctx context.Context, chk *deciders.Checker, t *domain.Tenant, tokenPolicy *domain.Policy, r *domain.Request) deciders.Verdict {
	if len(t.ShadowReadRules) == 0 && !hasShadowPolicy(t) {
		return decide(ctx, chk, t, tokenPolicy, r)
	}
	before := r.Clone()
	v := decide(ctx, chk, t, tokenPolicy, r)
	r.Shadow = shadows(ctx, chk, t, &before, r)
	return v
}

func hasShadowPolicy(t *domain.Tenant) bool {
	return slices.ContainsFunc(t.ApprovalPolicies, func(p domain.ApprovalPolicy) bool { return p.Shadow })
}

func decide(ctx context.Context, chk *deciders.Checker, t *domain.Tenant, tokenPolicy *domain.Policy, r *domain.Request) deciders.Verdict {
	if tokenPolicy != nil && !tokenPolicy.Permits(r.Capability.String()) {
		denyByTokenPolicy(chk.Views(), t, r)
		return deciders.Verdict{Decided: true, Status: r.Status, By: r.Decision.By}
	}
	v := chk.Check(ctx, t, r)
	if !v.Decided {
		r.Status = domain.StatusPending
		toTop(t, r, deciders.Next(chk.Views(), t.ID, r.Chain, r.Agent))
		r.JudgeEscalated = v.JudgeEscalated
		if v.ReviewerReason != "" {
			rr := v.ReviewerReason
			r.ReviewerReason = &rr
		}
		return v
	}
	r.Status = v.Status
	r.Decision = &domain.Decision{Status: v.Status, By: v.By, Scope: domain.ScopeOnce, DecidedAt: r.CreatedAt, QuotedRule: v.QuotedRule, Note: v.Note}
	if v.Status == domain.StatusApproved {
		exp := r.CreatedAt.Add(t.ApprovalTTL)
		r.Decision.ExpiresAt = &exp
	}
	return v
}

// TokenDeniedNote is the note of a request the token's policy denied.
func TokenDeniedNote(r *domain.Request) string {
	return "the policy of the token that started the work does not allow " + r.Capability.String()
}

// denyByTokenPolicy ends r at step 1: denied by policy, as the member's own
// policy denies, and never sent to a decider.
func denyByTokenPolicy(st deciders.State, t *domain.Tenant, r *domain.Request) {
	by := domain.Ref{Kind: domain.KindPolicy}
	if a, ok := st.Agent(t.ID, r.Agent); ok {
		by.ID = string(a.Member)
	}
	r.Status = domain.StatusDenied
	r.Decision = &domain.Decision{Status: domain.StatusDenied, By: by, Scope: domain.ScopeOnce, DecidedAt: r.CreatedAt,
		Note: TokenDeniedNote(r)}
}

// tokenPermits applies the caller's token policy, if it has one: "the
// token that started the work" narrows the member's policy, never widens it
// (SPEC §2 step 1).
func tokenPermits(c Caller, r *domain.Request) bool {
	return c.Token.Policy == nil || c.Token.Policy.Permits(r.Capability.String())
}
