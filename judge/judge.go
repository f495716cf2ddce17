package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Rule is one of the agent's rules as data.
type Rule struct {
	ID   string
	Text string
	// Effect is "" (the rule may support either verdict), "allow" or "deny".
	Effect string
}

// Call is the request being judged. Every field is untrusted data.
type Call struct {
	Action    string          // e.g. "tools.call"
	Target    string          // e.g. "issue_refund"
	Arguments json.RawMessage // a JSON object, exactly as the agent sent it
	Reason    string          // the agent's reason: untrusted
}

// Verdict is a judge's or reviewer's answer.
type Verdict string

// Verdicts. Judge answers Allow, Deny or Escalate; Review answers Allow,
// Deny or Abstain.
const (
	Allow    Verdict = "allow"
	Deny     Verdict = "deny"
	Escalate Verdict = "escalate"
	Abstain  Verdict = "abstain"
)

// Reasons: the machine-readable why of an [Outcome] or a [Review].
const (
	ReasonVerified      = "verified"       // allow/deny with a verified quote and evidence
	ReasonModelEscalate = "model_escalate" // the model answered "escalate"
	ReasonModelAbstain  = "model_abstain"  // the reviewer answered "abstain"
	ReasonInvalidQuote  = "invalid_quote"  // the quote is not one of the rules, verbatim
	ReasonWrongEffect   = "wrong_effect"   // the quoted rule has the other effect
	ReasonBadEvidence   = "bad_evidence"   // evidence empty or not in the argument values
	ReasonMalformed     = "malformed"      // the answer is not the required JSON
	ReasonRefusal       = "refusal"        // the model refused
	ReasonTimeout       = "timeout"        // deadline passed, or the caller cancelled
	ReasonHTTPError     = "http_error"     // non-2xx, transport or other client error
	ReasonCircuitOpen   = "circuit_open"   // the breaker is open; no call was made
	ReasonNoRules       = "no_rules"       // no usable rules; no call was made
)

// Outcome of judging. Verdict is Allow or Deny only when verified (Reason
// "verified"); otherwise it is Escalate.
type Outcome struct {
	Verdict  Verdict
	RuleID   string   // the verified rule's id (allow/deny only)
	Quote    string   // the quote as the model gave it (allow/deny only)
	Evidence []string // the verified evidence (allow/deny only)
	// ReviewerReason is set only for a valid "escalate" with a non-blank
	// rationale: DisplayLine(rationale). A display hint; it authorizes nothing.
	ReviewerReason string
	Reason         string // one of the Reason constants
}

// Judge reads an agent's rules and a request through a model and keeps only
// the verdicts it can verify. One Judge per tenant; safe for concurrent use.
type Judge struct {
	cfg     Config
	model   Model
	breaker *breaker
}

// New returns a Judge that calls the OpenAI-compatible endpoint in cfg
// through a [ChatModel]. Zero fields get the defaults written in [Config].
func New(cfg Config) *Judge {
	cfg.setDefaults()
	return NewWithModel(cfg, NewChatModel(cfg))
}

// NewWithModel returns a Judge that asks m. cfg.BaseURL, Model, APIKey and
// HTTPClient are not used; Timeout, Observe and the breaker settings are.
func NewWithModel(cfg Config, m Model) *Judge {
	cfg.setDefaults()
	return &Judge{cfg: cfg, model: m, breaker: newBreaker(cfg.BreakerFailures, cfg.BreakerCooldown)}
}

// Judge asks the model whether one of rules allows or denies call, and
// verifies the answer locally. It never returns an error: any failure is an
// Outcome with Verdict Escalate and the Reason. With no usable rules it
// returns Reason "no_rules" without calling the model.
func (j *Judge) Judge(ctx context.Context, rules []Rule, call Call) Outcome {
	if !hasRules(rules) {
		return j.observed(escalation(ReasonNoRules, ""), 0)
	}
	f, latency := j.run(ctx, judgePrompt(rules, call), rules, call.Arguments, Escalate)
	return j.observed(f.outcome(), latency)
}

func (j *Judge) observed(o Outcome, latency time.Duration) Outcome {
	j.observe(o.Reason, latency)
	return o
}

func (j *Judge) observe(reason string, latency time.Duration) {
	if j.cfg.Observe != nil {
		j.cfg.Observe(reason, latency)
	}
}

func escalation(reason, reviewerReason string) Outcome {
	return Outcome{Verdict: Escalate, Reason: reason, ReviewerReason: reviewerReason}
}

func (f finding) outcome() Outcome {
	switch f.reason {
	case ReasonVerified:
		return Outcome{Verdict: f.answer.Verdict, RuleID: f.rule.ID, Quote: f.answer.Quote,
			Evidence: f.answer.Evidence, Reason: ReasonVerified}
	case ReasonModelEscalate:
		return escalation(ReasonModelEscalate, DisplayLine(f.answer.Rationale))
	}
	return escalation(f.reason, "")
}

// finding is what one model call came to: the parsed answer, the rule it
// verified against, and the Reason.
type finding struct {
	answer answer
	rule   Rule
	reason string
}

// run asks the model and verifies its answer. fallback is the verdict that
// passes the request on (Escalate for Judge, Abstain for Review).
func (j *Judge) run(ctx context.Context, p Prompt, rules []Rule, args json.RawMessage, fallback Verdict) (finding, time.Duration) {
	text, reason, latency := j.complete(ctx, p)
	if reason != "" {
		return finding{reason: reason}, latency
	}
	a, err := parseAnswer(text, Allow, Deny, fallback)
	if err != nil {
		return finding{reason: ReasonMalformed}, latency
	}
	if a.Verdict == fallback {
		return finding{answer: a, reason: fallbackReason(fallback)}, latency
	}
	rule, reason := verify(a, rules, args)
	return finding{answer: a, rule: rule, reason: reason}, latency
}

func fallbackReason(v Verdict) string {
	if v == Abstain {
		return ReasonModelAbstain
	}
	return ReasonModelEscalate
}

// complete makes one model call through the breaker, bounded by
// min(ctx deadline, cfg.Timeout). It returns the text, or a non-empty Reason.
func (j *Judge) complete(ctx context.Context, p Prompt) (string, string, time.Duration) {
	trial, ok := j.breaker.allow()
	if !ok {
		return "", ReasonCircuitOpen, 0
	}
	callCtx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
	defer cancel()
	start := time.Now()
	text, err := completeBounded(callCtx, j.model, p)
	latency := time.Since(start)
	reason := classify(err)
	j.breaker.record(trial, isFailure(ctx, reason))
	return text, reason, latency
}

// completeBounded returns when the model answers or ctx ends, whichever is
// first, so a Model that ignores ctx still cannot hold the caller.
func completeBounded(ctx context.Context, m Model, p Prompt) (string, error) {
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		text, err := m.Complete(ctx, p)
		done <- result{text, err}
	}()
	select {
	case r := <-done:
		return r.text, r.err
	case <-ctx.Done():
		return "", fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
	}
}

// classify maps a Model error to a Reason; nil maps to "".
func classify(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrRefusal):
		return ReasonRefusal
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ReasonTimeout
	case errors.Is(err, ErrMalformed):
		return ReasonMalformed
	}
	return ReasonHTTPError
}

// isFailure reports whether a call counts against the breaker: timeouts and
// endpoint errors do, unless the caller itself cancelled.
func isFailure(ctx context.Context, reason string) bool {
	if errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	return reason == ReasonTimeout || reason == ReasonHTTPError
}

func hasRules(rules []Rule) bool {
	for _, r := range rules {
		if strings.TrimSpace(r.Text) != "" {
			return true
		}
	}
	return false
}
