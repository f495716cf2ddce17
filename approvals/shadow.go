package approvals

import (
	"context"
	"slices"
	"strconv"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/prometheus/client_golang/prometheus"
)

// shadows is what t's read rules and approval policies in shadow mode
// (SPEC §16) would have done with r, each as if it were enforced: before
// is r as it stood before Decide ran, r as Decide left it. A rule whose
// pattern does not cover r's capability is left out; one that would not
// have changed r says what r's creation did. The judge is never asked
// again: a shadow read rule is step 2, before the rules.
func shadows(ctx context.Context, chk *deciders.Checker, t *domain.Tenant, before, r *domain.Request) []domain.Shadow {
	var out []domain.Shadow
	capStr := r.Capability.String()
	for _, p := range t.ShadowReadRules {
		if _, ok := domain.MatchAny([]string{p}, capStr); ok {
			out = append(out, shadowRead(ctx, chk, t, p, before, r))
		}
	}
	for i, p := range t.ApprovalPolicies {
		if _, ok := domain.MatchAny(p.Match, capStr); ok && p.Shadow {
			out = append(out, shadowPolicy(chk, t, i, before, r))
		}
	}
	return out
}

// asIs is r's own outcome, as a shadow of id.
func asIs(id string, r *domain.Request) domain.Shadow {
	s := domain.Shadow{ID: id, Outcome: r.Status}
	if r.Status == domain.StatusPending && r.Approver != nil {
		a := *r.Approver
		s.Approver, s.RequiredApprovals = &a, r.Quorum()
	}
	return s
}

// shadowRead runs steps 1–2 again with pattern among t's read rules.
func shadowRead(ctx context.Context, chk *deciders.Checker, t *domain.Tenant, pattern string, before, r *domain.Request) domain.Shadow {
	if r.Decision != nil && r.Decision.By.Kind == domain.KindPolicy {
		return asIs(pattern, r) // step 1 denied it (the member's or the token's policy)
	}
	t2 := *t
	t2.ReadRules = append(slices.Clip(t.ReadRules), pattern)
	c2 := chk.WithoutJudge()
	probe := before.Clone()
	if v := c2.Check(ctx, &t2, &probe); v.Decided && v.By.Kind == domain.KindRead {
		return domain.Shadow{ID: pattern, Outcome: domain.StatusApproved}
	}
	return asIs(pattern, r)
}

// shadowPolicy routes r at the top again with t's approval policy i
// enforced, in its place in file order.
func shadowPolicy(chk *deciders.Checker, t *domain.Tenant, i int, before, r *domain.Request) domain.Shadow {
	id := t.ApprovalPolicies[i].ID
	if r.Status != domain.StatusPending {
		return asIs(id, r) // steps 1–4 decided it: no approver is asked
	}
	t2 := *t
	t2.ApprovalPolicies = slices.Clone(t.ApprovalPolicies)
	t2.ApprovalPolicies[i].Shadow = false
	probe := *before
	toTop(&t2, &probe, deciders.Next(chk.Views(), t.ID, probe.Chain, probe.Agent))
	probe.Status = domain.StatusPending
	return asIs(id, &probe)
}

func newShadowCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_shadow_total",
		Help: "Rules in shadow mode evaluated on new requests, by rule and whether they agreed with what the request's creation did (SPEC §16)."},
		[]string{"rule", "agree"})
}

// countShadows counts each shadow of a created request as agreeing or not.
func (s *Service) countShadows(r *domain.Request) {
	for _, sh := range r.Shadow {
		s.shadows.WithLabelValues(sh.ID, strconv.FormatBool(sh.Agrees(r))).Inc()
	}
}
