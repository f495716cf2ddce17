package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/judge"
	"github.com/countersign/countersign/kvstate"
	"github.com/prometheus/client_golang/prometheus"
)

// modelReviewer is the built-in model reviewer for agent deciders with
// reviewer: model (SPEC §3): the tenant's judge model reviews as the agent,
// given only its role, memory, brief, rules and the request, and its
// verified verdict is answered through the same path a person uses — so an
// allow by an agent who does not hold the capability is an endorsement, and
// abstain or any failure passes the request up.
type modelReviewer struct {
	svc    *approvals.Service
	views  *kvstate.Views
	judges map[events.TenantID]*judge.Judge
	log    *slog.Logger
}

var _ deciders.Reviewer = (*modelReviewer)(nil)

func newModelReviewer(svc *approvals.Service, views *kvstate.Views, reg *prometheus.Registry, log *slog.Logger) deciders.Reviewer {
	mr := &modelReviewer{svc: svc, views: views, judges: map[events.TenantID]*judge.Judge{}, log: log}
	for _, t := range views.Tenants() {
		if t.Judge == nil {
			continue
		}
		cfg := judge.Config{BaseURL: t.Judge.BaseURL, Model: t.Judge.Model, Timeout: t.Judge.Timeout}
		cfg.APIKey = apiKey(t.Judge.APIKeyEnv)
		mr.judges[t.ID] = judge.New(cfg)
	}
	if len(mr.judges) == 0 {
		return nil
	}
	return mr
}

// Review implements deciders.Reviewer.
func (mr *modelReviewer) Review(ctx context.Context, t *events.Tenant, decider *events.Agent, r *events.Request) error {
	j := mr.judges[t.ID]
	if j == nil {
		return nil
	}
	rules := toJudgeRules(mr.svc.RulesFor(t, decider.ID))
	rv := j.Review(ctx, judge.Bundle{AgentID: string(decider.ID), Role: decider.Role, Memory: decider.Memory,
		Brief: decider.Brief, Rules: rules, Call: toJudgeCall(r)})
	in := approvals.AnswerInput{Expected: &r.Revision, Decision: approvals.DecisionAbstain, Reason: rv.Note}
	switch rv.Verdict {
	case judge.Allow:
		in.Decision = approvals.DecisionAllow
	case judge.Deny:
		in.Decision = approvals.DecisionDeny
	}
	me := events.Ref{Kind: events.KindAgent, ID: string(decider.ID)}
	caller := approvals.Caller{Tenant: t, Principal: me, Token: events.Token{Principal: me, Scopes: []string{events.ScopeApprovalsWrite}}}
	_, err := mr.svc.Answer(ctx, caller, r.ID, in)
	if errors.Is(err, approvals.ErrConflict) || errors.Is(err, approvals.ErrNotFound) {
		return nil // the request moved on (answered, cancelled, expired): nothing left to review
	}
	return err
}
