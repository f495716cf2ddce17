package judge

import (
	"context"
	"time"
)

// Bundle is what the model reviewer sees when it reviews a request as an
// agent decider (SPEC §3): only the agent's role, its memory, the brief it
// gave, its rules, and the request. All of it is given to the model as data.
type Bundle struct {
	AgentID, Role, Memory, Brief string
	Rules                        []Rule
	Call                         Call
}

// Review is the model reviewer's answer. Verdict is Allow or Deny only when
// verified (Reason "verified"); otherwise it is Abstain.
type Review struct {
	Verdict  Verdict // Allow, Deny or Abstain
	RuleID   string  // the verified rule's id (allow/deny only)
	Quote    string  // the quote as the model gave it (allow/deny only)
	Evidence []string
	// Note is DisplayLine(rationale) for a verified allow/deny or a valid
	// abstain; empty otherwise. A display hint; it authorizes nothing.
	Note   string
	Reason string // one of the Reason constants; "model_abstain" for a valid abstain
}

// Review asks the model to review b.Call as the agent b describes, under
// the same verification as [Judge.Judge]: allow or deny stands only with a
// verbatim quote of one of b.Rules of a fitting effect and evidence found in
// the arguments; anything else is Abstain with the Reason. With no usable
// rules it abstains with Reason "no_rules" without calling the model.
// Whether the agent holds the capability is the caller's check, not this one.
func (j *Judge) Review(ctx context.Context, b Bundle) Review {
	if !hasRules(b.Rules) {
		return j.observedReview(Review{Verdict: Abstain, Reason: ReasonNoRules}, 0)
	}
	f, latency := j.run(ctx, reviewPrompt(b), b.Rules, b.Call.Arguments, Abstain)
	return j.observedReview(f.review(), latency)
}

func (j *Judge) observedReview(r Review, latency time.Duration) Review {
	j.observe(r.Reason, latency)
	return r
}

func (f finding) review() Review {
	switch f.reason {
	case ReasonVerified:
		return Review{Verdict: f.answer.Verdict, RuleID: f.rule.ID, Quote: f.answer.Quote,
			Evidence: f.answer.Evidence, Note: DisplayLine(f.answer.Rationale), Reason: ReasonVerified}
	case ReasonModelAbstain:
		return Review{Verdict: Abstain, Note: DisplayLine(f.answer.Rationale), Reason: ReasonModelAbstain}
	}
	return Review{Verdict: Abstain, Reason: f.reason}
}
