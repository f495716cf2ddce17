package replay

import (
	"context"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// Input is what to replay.
type Input struct {
	// Candidate is the tenant as the candidate config has it (required).
	Candidate *domain.Tenant
	// Running is the tenant as the running config has it: it names the
	// backups of the recorded approvers. nil: backups are not compared.
	Running *domain.Tenant
	// Since and Until bound the window by the entries' time; a zero
	// Until has no end.
	Since, Until time.Time
}

// Run replays the window's requests of src through in.Candidate's check
// order and reports what would change (SPEC §16). It writes nothing.
// Errors: a line that is no entry, or src's own.
func Run(ctx context.Context, in Input, src Source) (Report, error) {
	h, err := readHistory(src)
	if err != nil {
		return Report{}, err
	}
	rep := newReport(in)
	err = src(func(line []byte) error {
		r, ok, err := created(line, in.Since, in.Until)
		if err != nil || !ok {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.add(r, replayOne(ctx, in, h, r))
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	return rep.finish(), nil
}

// result is one request's old and new outcome.
type result struct {
	old, new Outcome
	why      string
}

// replayOne runs r, as it was created, through the candidate's check order
// with the state in force at its creation.
func replayOne(ctx context.Context, in Input, h *history, rec *domain.Request) result {
	t := in.Candidate
	st := at{h: h, tenant: t, t: rec.CreatedAt}
	old := outcomeOf(rec, in.Running)
	r := asCreated(rec)
	if _, ok := st.Agent(t.ID, r.Agent); !ok {
		return result{old: old, new: Outcome{By: ByRefused}, why: "agent " + string(r.Agent) + " is not in this config: the submit would be refused"}
	}
	jd := &recordedJudge{recorded: rec.Decision}
	chk, err := deciders.NewChecker(deciders.CheckerConfig{Views: st, Judge: jd, Rules: func(t *domain.Tenant, a domain.AgentID) []domain.Rule {
		return append(approvals.ConfiguredRules(t, a), st.keptRules(a)...)
	}})
	if err != nil { // st is never nil: a Views is all the config asks
		panic(err)
	}
	approvals.Decide(ctx, chk, t, tokenPolicy(t, r), r)
	nw := outcomeOf(r, t)
	return result{old: old, new: nw, why: reason(t, r, old, nw)}
}

// asCreated is rec as it stood before its creation's check order: no
// status, decision, approver or quorum; its shell stages all waiting.
func asCreated(rec *domain.Request) *domain.Request {
	r := *rec
	r.Status, r.Decision, r.Approver, r.Escalation = "", nil, nil, nil
	r.RequiredApprovals, r.Approvals = 1, domain.Approvals{}
	r.JudgeEscalated, r.ReviewerReason, r.Shadow = false, nil, nil
	stages := make([]domain.Stage, len(rec.Stages))
	for i, s := range rec.Stages {
		s.AllowedBy, s.Scope, s.AllowedAt = nil, "", nil
		stages[i] = s
	}
	r.SetStages(stages)
	return &r
}

// tokenPolicy is the token policy the candidate holds r to. The token a
// request was made with is not recorded, so r is denied by token policy
// only when every token of its agent in t has a policy and none permits r
// (a policy that permits nothing stands for that); otherwise nil.
func tokenPolicy(t *domain.Tenant, r *domain.Request) *domain.Policy {
	n := 0
	for _, tok := range t.Tokens {
		if tok.Principal.Kind != domain.KindAgent || tok.Principal.ID != string(r.Agent) {
			continue
		}
		if tok.Policy == nil || tok.Policy.Permits(r.Capability.String()) {
			return nil
		}
		n++
	}
	if n == 0 {
		return nil
	}
	return &domain.Policy{}
}
