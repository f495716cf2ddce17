package app

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/judge"
	"github.com/prometheus/client_golang/prometheus"
)

// rulesJudge adapts one judge.Judge per tenant to deciders.RulesJudge.
// The judges are rebuilt whole when a config revision is applied (set).
type rulesJudge struct {
	judges  atomic.Pointer[map[domain.TenantID]*judge.Judge]
	metrics *judgeMetrics
	log     *slog.Logger
}

// judgeMetrics are the judge's latency and outcome counts.
type judgeMetrics struct {
	outcomes *prometheus.CounterVec
	latency  prometheus.Histogram
}

func newJudgeMetrics(reg *prometheus.Registry) *judgeMetrics {
	m := &judgeMetrics{
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_judge_outcomes_total",
			Help: "Judge and model-reviewer calls by outcome reason."}, []string{"tenant", "reason"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "countersign_judge_model_latency_seconds",
			Help: "Latency of the judge's model calls.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}),
	}
	_ = reg.Register(m.outcomes)
	_ = reg.Register(m.latency)
	return m
}

// newRulesJudge builds the tenants' judges: the Checker's Judge,
// consulted only for tenants that have one.
func newRulesJudge(tenants []*domain.Tenant, reg *prometheus.Registry, log *slog.Logger) *rulesJudge {
	rj := &rulesJudge{metrics: newJudgeMetrics(reg), log: log}
	rj.set(tenants)
	return rj
}

// set builds the judges of tenants, replacing the ones before.
func (rj *rulesJudge) set(tenants []*domain.Tenant) {
	judges := map[domain.TenantID]*judge.Judge{}
	m := rj.metrics
	for _, t := range tenants {
		if t.Judge == nil {
			continue
		}
		tenant := string(t.ID)
		cfg := judge.Config{BaseURL: t.Judge.BaseURL, Model: t.Judge.Model, Timeout: t.Judge.Timeout,
			Observe: func(reason string, latency time.Duration) {
				m.outcomes.WithLabelValues(tenant, reason).Inc()
				if latency > 0 {
					m.latency.Observe(latency.Seconds())
				}
			}}
		cfg.APIKey = apiKey(t.Judge.APIKeyEnv)
		if err := cfg.Validate(); err != nil {
			rj.log.Warn("judge misconfigured; its requests go to deciders", "tenant", tenant, "err", err)
		}
		judges[t.ID] = judge.New(cfg)
	}
	rj.judges.Store(&judges)
}

// of returns tenant's judge, or nil when it has none.
func (rj *rulesJudge) of(tenant domain.TenantID) *judge.Judge { return (*rj.judges.Load())[tenant] }

// JudgeRules implements deciders.RulesJudge.
func (rj *rulesJudge) JudgeRules(ctx context.Context, t *domain.Tenant, rules []domain.Rule, r *domain.Request) deciders.JudgeResult {
	j := rj.of(t.ID)
	if j == nil {
		return deciders.JudgeResult{Verdict: string(judge.Escalate)}
	}
	out := j.Judge(ctx, toJudgeRules(rules), toJudgeCall(r))
	return deciders.JudgeResult{Verdict: string(out.Verdict), RuleID: domain.RuleID(out.RuleID), Quote: out.Quote, ReviewerReason: out.ReviewerReason}
}

func toJudgeRules(rules []domain.Rule) []judge.Rule {
	out := make([]judge.Rule, len(rules))
	for i, r := range rules {
		out[i] = judge.Rule{ID: string(r.ID), Text: r.Text, Effect: r.Effect}
	}
	return out
}

func toJudgeCall(r *domain.Request) judge.Call {
	return judge.Call{Action: r.Capability.Action, Target: r.Capability.Target, Arguments: r.Arguments, Reason: r.Reason}
}

// apiKey reads the judge's API key from the variable the config names.
func apiKey(env string) string {
	if env == "" {
		return ""
	}
	return os.Getenv(env)
}
