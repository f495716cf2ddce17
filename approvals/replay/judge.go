package replay

import (
	"context"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/events"
)

// recordedJudge stands in for the judge, which a replay never calls: it
// decides only as the recorded request's judge did, and only when the
// rule that decision quoted is among the rules it is given word for word;
// anything else escalates, and the request is reported as "judge".
type recordedJudge struct {
	recorded *events.Decision
}

var _ deciders.RulesJudge = (*recordedJudge)(nil)

func (j *recordedJudge) JudgeRules(_ context.Context, _ *events.Tenant, rules []events.Rule, _ *events.Request) deciders.JudgeResult {
	d := j.recorded
	if d == nil || d.By.Kind != events.KindRule || d.QuotedRule == "" {
		return deciders.JudgeResult{Verdict: "escalate"}
	}
	for _, rule := range rules {
		if rule.Text == d.QuotedRule {
			v := events.EffectAllow
			if d.Status == events.StatusDenied {
				v = events.EffectDeny
			}
			return deciders.JudgeResult{Verdict: v, RuleID: rule.ID, Quote: d.QuotedRule}
		}
	}
	return deciders.JudgeResult{Verdict: "escalate"}
}
