package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/deciders/review"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/judge"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// modelReviewerQueue is the queue group of the built-in model reviewer in
// every deciders process. It differs from events.ReviewQueue: an agent's
// own runtimes and the model reviewer are separate groups, so an offer the
// model reviewer leaves (not its agent) still reaches the agent's runtimes.
const modelReviewerQueue = "countersign-model-reviewer"

// modelReviewer is the built-in model reviewer for agent deciders with
// reviewer: model (SPEC §3). It is one agent runtime on the bus: one
// wildcard queue subscription per deciders process takes the review offers
// of every such agent (one subscription, however many agents), the
// tenant's judge model reviews as the agent given only its role, memory,
// the brief it gave, its rules and the request, and its verified verdict is
// answered through the same path a person uses — so an allow by an agent
// who does not hold the capability is an endorsement, and abstain or any
// failure passes the request up. No JetStream message is held while the
// model thinks.
type modelReviewer struct {
	svc    *approvals.Service
	views  *views.Views
	judges *rulesJudge
}

// newModelReviewer returns the model reviewer's runtime, or nil when no
// tenant has a judge at start. It reviews with the judges of the running
// config revision (judges).
func newModelReviewer(svc *approvals.Service, views *views.Views, judges *rulesJudge, log *slog.Logger) *review.Runtime {
	if len(*judges.judges.Load()) == 0 {
		return nil
	}
	mr := &modelReviewer{svc: svc, views: views, judges: judges}
	return &review.Runtime{Subject: events.ReviewFilter, Queue: modelReviewerQueue,
		Accept: mr.accepts, Review: mr.review, Answer: mr.answer, Concurrency: 256, Logger: log}
}

// accepts takes the offers of agents reviewed by the model in tenants with
// a judge, for a request this process knows at the offered revision.
func (mr *modelReviewer) accepts(b review.Bundle) bool {
	_, _, ok := mr.verified(b)
	return ok
}

// verified rebuilds b from this process's own state: the model reviews what
// countersign stored, never what a message claims. It fails for an agent
// not reviewed by the model, or a request not (yet) known at b's revision
// and waiting on b's decider (an offer left untaken is offered again).
// It returns the mirror's record too: a partial one's bundle has no
// arguments yet.
func (mr *modelReviewer) verified(b review.Bundle) (review.Bundle, kvstate.Record, bool) {
	t, id := b.Request.Tenant, b.Decider.ID
	a, ok := mr.views.Agent(t, id)
	if !ok || a.Reviewer != "model" || mr.judges.of(t) == nil {
		return b, kvstate.Record{}, false
	}
	rec, ok := mr.views.Requests().Get(kvstate.RequestKey(t, b.Request.ID))
	if !ok || rec.Revision != b.Request.Revision || rec.Status != domain.StatusPending ||
		rec.Approver == nil || *rec.Approver != (domain.Ref{Kind: domain.KindAgent, ID: string(id)}) {
		return b, kvstate.Record{}, false
	}
	return domain.NewReviewBundle(&rec.Request, a, deciders.BriefOf(mr.views, &rec.Request)), rec, true
}

func (mr *modelReviewer) review(ctx context.Context, offered review.Bundle) (review.Answer, error) {
	b, rec, ok := mr.verified(offered)
	if !ok {
		return review.Answer{}, errors.New("the request moved on")
	}
	if rec.Partial() {
		full, err := mr.svc.Full(ctx, rec)
		if err != nil {
			return review.Answer{}, err
		}
		b.Request.Arguments = full.Arguments
	}
	t, ok := mr.views.Tenant(b.Request.Tenant)
	if !ok {
		return review.Answer{}, errors.New("unknown tenant")
	}
	d := b.Decider
	j := mr.judges.of(t.ID)
	if j == nil {
		return review.Answer{}, errors.New("the tenant has no judge now")
	}
	rv := j.Review(ctx, judge.Bundle{AgentID: string(d.ID), Role: d.Role, Memory: d.Memory,
		Brief: d.Brief, Rules: toJudgeRules(mr.svc.RulesFor(t, d.ID)), Call: toJudgeCall(&b.Request)})
	a := review.Answer{Decision: review.Abstain, Reason: rv.Note}
	switch rv.Verdict {
	case judge.Allow:
		a.Decision = review.Allow
	case judge.Deny:
		a.Decision = review.Deny
	}
	return a, nil
}

// answer answers in-process, as the agent, through approvals.Answer.
func (mr *modelReviewer) answer(ctx context.Context, b review.Bundle, a review.Answer) error {
	t, ok := mr.views.Tenant(b.Request.Tenant)
	if !ok {
		return errors.New("unknown tenant")
	}
	me := domain.Ref{Kind: domain.KindAgent, ID: string(b.Decider.ID)}
	caller := approvals.Caller{Tenant: t, Principal: me, Token: domain.Token{Principal: me, Scopes: []string{domain.ScopeApprovalsWrite}}}
	rev := b.Request.Revision
	_, err := mr.svc.Answer(ctx, caller, b.Request.ID, approvals.AnswerInput{Expected: &rev, Decision: a.Decision, Scope: a.Scope, Reason: a.Reason})
	if errors.Is(err, approvals.ErrConflict) || errors.Is(err, approvals.ErrNotFound) {
		return review.ErrConflict // the request moved on (answered, cancelled, expired)
	}
	return err
}
