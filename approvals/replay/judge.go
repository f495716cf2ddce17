package replay

import (
	"context"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// recordedJudge stands in for the judge, which a replay never calls: it
// decides only as the recorded request's judge did, and only when the
// rule that decision quoted is among the rules it is given word for word;
// anything else escalates, and the request is reported as "judge".
type recordedJudge struct {
	recorded *domain.Decision
}

var _ deciders.RulesJudge = (*recordedJudge)(nil)

func (j *recordedJudge) JudgeRules(_ context.Context, _ *domain.Tenant, rules []domain.Rule, _ *domain.Request) deciders.JudgeResult {
	d := j.recorded
	if d == nil || d.By.Kind != domain.KindRule || d.QuotedRule == "" {
		return deciders.JudgeResult{Verdict: "escalate"}
	}
	for _, rule := range rules {
		if rule.Text == d.QuotedRule {
			v := domain.EffectAllow
			if d.Status == domain.StatusDenied {
				v = domain.EffectDeny
			}
			return deciders.JudgeResult{Verdict: v, RuleID: rule.ID, Quote: d.QuotedRule}
		}
	}
	return deciders.JudgeResult{Verdict: "escalate"}
}
