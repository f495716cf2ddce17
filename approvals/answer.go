package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// Answer decisions.
const (
	DecisionAllow   = "allow"
	DecisionDeny    = "deny"
	DecisionAbstain = "abstain"
)

// AnswerInput is the body of POST /v1/requests/{id}. Expected is a pointer
// so that a missing value is told from 0.
type AnswerInput struct {
	Expected *uint64 `json:"expected"`
	Decision string  `json:"decision"`
	Scope    string  `json:"scope,omitempty"`
	Reason   string  `json:"reason,omitempty"`
	Rule     string  `json:"rule,omitempty"`
	// Arguments, with an allow, approves the call with edits (SPEC §5):
	// the call as it should run instead. Nil: the call as submitted.
	Arguments json.RawMessage `json:"arguments,omitempty"`

	edit *edit // Arguments checked against the request (checkEdit)
}

// Validate checks the answer's own fields (answer rule 1) for caller c.
func (in *AnswerInput) Validate(c Caller) error {
	if in.Scope == "" {
		in.Scope = domain.ScopeOnce
	}
	switch {
	case in.Expected == nil:
		return invalid("expected", "expected (the revision you answer) is required")
	case in.Decision == "":
		return invalid("decision", "decision is required")
	case in.Decision != DecisionAllow && in.Decision != DecisionDeny && in.Decision != DecisionAbstain:
		return invalid("decision", "unknown decision %q", in.Decision)
	case domain.ScopeRank(in.Scope) == 0:
		return invalid("scope", "unknown scope %q", in.Scope)
	case in.Decision == DecisionAbstain && c.Principal.Kind != domain.KindAgent:
		return invalid("decision", "only agent deciders may abstain")
	case in.Rule != "":
		return checkRuleText("rule", in.Rule)
	}
	return nil
}

// Answer applies a decider's answer (SPEC §3, §5 answer rules): a safe
// repeat returns the record unchanged; a caller who is not the current
// approver, a terminal or overdue request, a stale expected, or a
// protected write no client watches (reason ReasonUnwatched) is
// ErrConflict; otherwise one compare-and-set decides, endorses or passes
// the request up (a shell request: the answer applies to its current
// stage, and an allow of any stage but the last leaves it pending on the
// same decider, SPEC §8), and the grants the answer creates are written before
// Answer returns. Errors: InvalidRequest, ErrNotFound, ErrConflict,
// ErrForbidden, ErrUnavailable.
func (s *Service) Answer(ctx context.Context, c Caller, id domain.RequestID, in AnswerInput) (kvstate.Record, error) {
	if err := in.Validate(c); err != nil {
		return kvstate.Record{}, err
	}
	rec, err := s.mirrored(ctx, c, id)
	if err != nil {
		return rec, err
	}
	if why := onceOnly(&rec.Request); why != "" && in.Scope != domain.ScopeOnce {
		return rec, invalid("scope", "%s", why) // what Choices offers (endpoint_choices.go)
	}
	if in.edit, err = checkEdit(c, &rec.Request, in); err != nil {
		return rec, err
	}
	if repeat(&rec.Request, c.Principal, in) {
		return rec, s.ensureGrants(ctx, &rec.Request)
	}
	rec, err = s.answerWrite(ctx, c, rec, in, s.watched(ctx, &rec.Request))
	if errors.Is(err, errRepeat) {
		return rec, s.ensureGrants(ctx, &rec.Request)
	}
	if err != nil {
		return rec, stateErr(err, ErrNotFound)
	}
	if err := s.ensureGrants(ctx, &rec.Request); err != nil {
		return rec, err
	}
	return rec, s.keepRule(ctx, c, &rec.Request, in.Rule)
}

// errRepeat stops a transition that found the caller's answer already applied.
var errRepeat = errors.New("approvals: repeat of an applied answer")

// repeat reports answer rule 2: the caller's own earlier answer again.
func repeat(r *domain.Request, p domain.Ref, in AnswerInput) bool {
	if same, counted := repeatedAllow(r, p, in.Scope); counted && in.Decision == DecisionAllow {
		return same
	}
	if d := r.Decision; d != nil && d.By == p {
		want := domain.StatusApproved
		if in.Decision == DecisionDeny {
			want = domain.StatusDenied
		}
		return in.Decision != DecisionAbstain && d.Status == want && d.Scope == in.Scope
	}
	if p.Kind != domain.KindAgent {
		return false
	}
	list := r.Abstentions
	if in.Decision == DecisionAllow {
		list = r.Endorsements
	} else if in.Decision == DecisionDeny {
		return false
	}
	for _, e := range list {
		if string(e.Agent) == p.ID {
			return true
		}
	}
	return false
}

// answerable is answer rule 3; watched is false for a protected write
// no client watches (SPEC §8).
func (s *Service) answerable(c Caller, r *domain.Request, expected uint64, watched bool) error {
	switch {
	case r.Status.Terminal():
		return conflict("request is %s", r.Status)
	case !c.Tenant.MayAnswer(r, c.Principal):
		return notYours(r, c.Principal)
	case !expectedFits(r, expected):
		return Stale(r, expected)
	case !s.now().Before(r.DeadlineAt):
		return conflict("the request's deadline has passed")
	case !watched:
		return errUnwatched
	}
	return nil
}

// apply is answer rule 4 on r (already checked answerable).
func (s *Service) apply(c Caller, r *domain.Request, in AnswerInput) (string, error) {
	now := s.now().UTC()
	switch in.Decision {
	case DecisionDeny:
		s.finish(c.Tenant, r, domain.StatusDenied, c.Principal, in, now)
		return events.TypeRequestDecided, nil
	case DecisionAbstain:
		r.Abstentions = append(r.Abstentions, domain.Endorsement{Agent: domain.AgentID(c.Principal.ID), Note: in.Reason, At: now})
		return s.passUp(r, c.Principal)
	}
	holds, max := s.checker.Holds(c.Tenant, c.Principal, r)
	if !holds && c.Principal.Kind == domain.KindPerson {
		return "", forbid("your policy does not allow this capability")
	}
	if in.edit != nil && (!holds || r.Quorum() > 1) { // an edit binds a call no one else approved
		return "", invalid("arguments", "an edit must be the one allow that approves the request (not an endorsement, nor one of a group's %d)", r.Quorum())
	}
	if in.edit != nil {
		in.edit.apply(r, c.Principal, now)
	}
	if !holds {
		r.Endorsements = append(r.Endorsements, domain.Endorsement{Agent: domain.AgentID(c.Principal.ID), Note: in.Reason, At: now})
		return s.passUp(r, c.Principal)
	}
	if domain.ScopeRank(in.Scope) > domain.ScopeRank(max) {
		return "", invalid("scope", "you hold this capability for at most scope %q", max)
	}
	if c.Principal.Kind == domain.KindPerson {
		return s.personAllow(c, r, in, now), nil
	}
	if !r.AllowStage(c.Principal, in.Scope, now) { // a shell request's next stage waits (SPEC §8)
		return events.TypeRequestUpdated, nil
	}
	s.finish(c.Tenant, r, domain.StatusApproved, c.Principal, in, now)
	return events.TypeRequestDecided, nil
}

// passUp moves r to the decider above the agent from in r's chain.
func (s *Service) passUp(r *domain.Request, from domain.Ref) (string, error) {
	above := deciders.Next(s.views, r.Tenant, r.Chain, domain.AgentID(from.ID))
	if above.Kind == "" {
		return "", conflict("no decider above %s", from.ID)
	}
	t, _ := s.views.Tenant(r.Tenant)
	toTop(t, r, above)
	return events.TypeRequestEscalated, nil
}

func (s *Service) finish(t *domain.Tenant, r *domain.Request, st domain.Status, by domain.Ref, in AnswerInput, now time.Time) {
	r.Status = st
	r.Decision = &domain.Decision{Status: st, By: by, Note: in.Reason, Scope: in.Scope, DecidedAt: now}
	if st == domain.StatusApproved {
		exp := now.Add(t.ApprovalTTL)
		r.Decision.ExpiresAt = &exp
	}
}

// answerWrite writes the answer in to rec (a compare-and-set, tried again
// on a lost race) and puts the result in the mirror.
func (s *Service) answerWrite(ctx context.Context, c Caller, rec kvstate.Record, in AnswerInput, watched bool) (kvstate.Record, error) {
	return s.views.WriteRequest(rec.Tenant, rec.ID, func() (kvstate.Record, error) {
		return s.store.TransitionFrom(ctx, rec, func(r *domain.Request) (string, error) {
			if repeat(r, c.Principal, in) {
				return "", errRepeat
			}
			if err := s.answerable(c, r, *in.Expected, watched); err != nil {
				return "", err
			}
			return s.apply(c, r, in)
		})
	})
}
