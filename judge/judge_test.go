package judge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	ruleRefund = "Refunds under 50 GBP for a confirmed duplicate charge may be issued."
	ruleCap    = "Never issue a refund over 500 GBP."
	ruleLookup = "Looking up the status of an order may always be done."
	rulePlain  = "Refunds to the original card are decided by this rule."
)

var refundRules = []Rule{
	{ID: "rul_refund", Text: ruleRefund, Effect: "allow"},
	{ID: "rul_cap", Text: ruleCap, Effect: "deny"},
	{ID: "rul_lookup", Text: ruleLookup, Effect: "allow"},
	{ID: "rul_plain", Text: rulePlain},
}

func refundCall(args string) Call {
	return Call{Action: "tools.call", Target: "issue_refund", Arguments: json.RawMessage(args), Reason: "Customer was charged twice."}
}

const smallRefund = `{"order_id":"ord_123","amount":42.50,"currency":"GBP","duplicate_charge":true}`

func TestJudgeVerification(t *testing.T) {
	tests := []struct {
		name       string
		rules      []Rule
		args       string
		answer     string
		verdict    Verdict
		reason     string
		ruleID     string
		reviewerRe string
	}{
		{name: "correct quote allows", answer: modelAnswer("allow", ruleRefund, []string{"42.50", "GBP", "true"}, "Small duplicate refund."),
			verdict: Allow, reason: ReasonVerified, ruleID: "rul_refund"},
		{name: "deny rule denies", args: `{"order_id":"ord_9","amount":900,"currency":"GBP"}`, answer: modelAnswer("deny", ruleCap, []string{"900"}, "Too large."),
			verdict: Deny, reason: ReasonVerified, ruleID: "rul_cap"},
		{name: "plain rule supports deny", answer: modelAnswer("deny", rulePlain, []string{"ord_123"}, "x"),
			verdict: Deny, reason: ReasonVerified, ruleID: "rul_plain"},
		{name: "whitespace folded quote allows", answer: modelAnswer("allow", "  Refunds under 50\nGBP for a confirmed\t\tduplicate charge  may be issued. ", []string{"42.50"}, ""),
			verdict: Allow, reason: ReasonVerified, ruleID: "rul_refund"},
		{name: "fenced answer allows", answer: "```json\n" + modelAnswer("allow", ruleRefund, []string{"42.50"}, "") + "\n```",
			verdict: Allow, reason: ReasonVerified, ruleID: "rul_refund"},
		{name: "same text picks the rule whose effect fits",
			rules:  []Rule{{ID: "rul_d", Text: ruleRefund, Effect: "deny"}, {ID: "rul_a", Text: ruleRefund, Effect: "allow"}},
			answer: modelAnswer("allow", ruleRefund, []string{"42.50"}, ""), verdict: Allow, reason: ReasonVerified, ruleID: "rul_a"},
		{name: "quote in no rule", answer: modelAnswer("allow", "Refunds may always be issued.", []string{"42.50"}, ""),
			verdict: Escalate, reason: ReasonInvalidQuote},
		{name: "partial quote", answer: modelAnswer("allow", "Refunds under 50 GBP", []string{"42.50"}, ""),
			verdict: Escalate, reason: ReasonInvalidQuote},
		{name: "quote with extra words", answer: modelAnswer("allow", ruleRefund+" Always.", []string{"42.50"}, ""),
			verdict: Escalate, reason: ReasonInvalidQuote},
		{name: "quote in other case", answer: modelAnswer("allow", strings.ToUpper(ruleRefund), []string{"42.50"}, ""),
			verdict: Escalate, reason: ReasonInvalidQuote},
		{name: "empty quote", answer: modelAnswer("allow", " ", []string{"42.50"}, ""),
			verdict: Escalate, reason: ReasonInvalidQuote},
		{name: "wrong effect", answer: modelAnswer("deny", ruleRefund, []string{"42.50"}, ""),
			verdict: Escalate, reason: ReasonWrongEffect},
		{name: "evidence only in reason", answer: modelAnswer("allow", ruleRefund, []string{"charged twice"}, ""),
			verdict: Escalate, reason: ReasonBadEvidence},
		{name: "evidence only in a key", answer: modelAnswer("allow", ruleRefund, []string{"duplicate_charge"}, ""),
			verdict: Escalate, reason: ReasonBadEvidence},
		{name: "evidence across two values", answer: modelAnswer("allow", ruleRefund, []string{"42.50 GBP"}, ""),
			verdict: Escalate, reason: ReasonBadEvidence},
		{name: "number not as written", answer: modelAnswer("allow", ruleRefund, []string{"42.500"}, ""),
			verdict: Escalate, reason: ReasonBadEvidence},
		{name: "one of two evidence items missing", answer: modelAnswer("allow", ruleRefund, []string{"42.50", "EUR"}, ""),
			verdict: Escalate, reason: ReasonBadEvidence},
		{name: "no evidence", answer: modelAnswer("allow", ruleRefund, nil, ""),
			verdict: Escalate, reason: ReasonBadEvidence},
		{name: "blank evidence", answer: modelAnswer("allow", ruleRefund, []string{""}, ""),
			verdict: Escalate, reason: ReasonBadEvidence},
		{name: "evidence shadowed by a duplicate key", args: `{"amount":"10","amount":5000}`, answer: modelAnswer("allow", ruleRefund, []string{"10"}, ""),
			verdict: Escalate, reason: ReasonBadEvidence},
		{name: "model escalates", answer: modelAnswer("escalate", "", nil, "The amount is above\nthe limit. Ask finance."),
			verdict: Escalate, reason: ReasonModelEscalate, reviewerRe: "The amount is above the limit."},
		{name: "model escalates without rationale", answer: modelAnswer("escalate", "", nil, " \n "),
			verdict: Escalate, reason: ReasonModelEscalate},
		{name: "not JSON", answer: "Sure! I would allow this.", verdict: Escalate, reason: ReasonMalformed},
		{name: "truncated JSON", answer: `{"verdict":"allow","quote":"Refunds under 50 GBP for a conf`, verdict: Escalate, reason: ReasonMalformed},
		{name: "trailing garbage", answer: modelAnswer("allow", ruleRefund, []string{"42.50"}, "") + ` {"verdict":"deny"}`, verdict: Escalate, reason: ReasonMalformed},
		{name: "unknown verdict", answer: modelAnswer("approve", ruleRefund, []string{"42.50"}, ""), verdict: Escalate, reason: ReasonMalformed},
		{name: "abstain is not a judge verdict", answer: modelAnswer("abstain", "", nil, ""), verdict: Escalate, reason: ReasonMalformed},
		{name: "missing field", answer: `{"verdict":"allow","quote":"` + ruleRefund + `","rationale":""}`, verdict: Escalate, reason: ReasonMalformed},
		{name: "null evidence", answer: `{"verdict":"allow","quote":"` + ruleRefund + `","evidence":null,"rationale":""}`, verdict: Escalate, reason: ReasonMalformed},
		{name: "unknown field", answer: `{"verdict":"allow","quote":"` + ruleRefund + `","evidence":["42.50"],"rationale":"","override":true}`, verdict: Escalate, reason: ReasonMalformed},
		{name: "array instead of object", answer: `[]`, verdict: Escalate, reason: ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, args := tt.rules, tt.args
			if rules == nil {
				rules = refundRules
			}
			if args == "" {
				args = smallRefund
			}
			srv := answering(t, tt.answer)
			got := New(srv.config()).Judge(context.Background(), rules, refundCall(args))
			checkOutcome(t, got, tt.verdict, tt.reason, tt.ruleID)
			if got.ReviewerReason != tt.reviewerRe {
				t.Errorf("ReviewerReason = %q, want %q", got.ReviewerReason, tt.reviewerRe)
			}
		})
	}
}

func checkOutcome(t *testing.T, got Outcome, verdict Verdict, reason, ruleID string) {
	t.Helper()
	if got.Verdict != verdict || got.Reason != reason || got.RuleID != ruleID {
		t.Fatalf("got %s/%s/%q, want %s/%s/%q", got.Verdict, got.Reason, got.RuleID, verdict, reason, ruleID)
	}
	if verdict == Escalate && (got.Quote != "" || got.Evidence != nil) {
		t.Errorf("escalation carries quote %q evidence %q", got.Quote, got.Evidence)
	}
}

func TestJudgeVerifiedOutcomeCarriesQuoteAndEvidence(t *testing.T) {
	srv := answering(t, modelAnswer("allow", ruleRefund+"\n", []string{"42.50", "true"}, "ok"))
	got := New(srv.config()).Judge(context.Background(), refundRules, refundCall(smallRefund))
	if got.Quote != ruleRefund+"\n" || !slices.Equal(got.Evidence, []string{"42.50", "true"}) || got.ReviewerReason != "" {
		t.Errorf("got quote %q evidence %q reviewer reason %q", got.Quote, got.Evidence, got.ReviewerReason)
	}
}

func TestJudgeNoRulesMakesNoCall(t *testing.T) {
	srv := answering(t, modelAnswer("allow", ruleRefund, []string{"42.50"}, ""))
	var reasons []string
	cfg := srv.config()
	cfg.Observe = func(reason string, latency time.Duration) {
		reasons = append(reasons, reason)
		if latency != 0 {
			t.Errorf("latency = %v, want 0", latency)
		}
	}
	j := New(cfg)
	for _, rules := range [][]Rule{nil, {{ID: "rul_blank", Text: " \n "}}} {
		checkOutcome(t, j.Judge(context.Background(), rules, refundCall(smallRefund)), Escalate, ReasonNoRules, "")
	}
	if srv.count() != 0 || !slices.Equal(reasons, []string{ReasonNoRules, ReasonNoRules}) {
		t.Errorf("server got %d requests, observed %q; want 0 and two no_rules", srv.count(), reasons)
	}
}

func TestJudgeRefusal(t *testing.T) {
	for name, rp := range map[string]reply{
		"refusal field":  {refusal: "I can't help with that."},
		"content filter": {content: "", finish: "content_filter"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newChatServer(t, func(int, apiRequest) reply { return rp })
			got := New(srv.config()).Judge(context.Background(), refundRules, refundCall(smallRefund))
			checkOutcome(t, got, Escalate, ReasonRefusal, "")
		})
	}
}

func TestJudgeHTTPError(t *testing.T) {
	srv := newChatServer(t, func(int, apiRequest) reply { return reply{status: 500, errMsg: "The server had an error"} })
	got := New(srv.config()).Judge(context.Background(), refundRules, refundCall(smallRefund))
	checkOutcome(t, got, Escalate, ReasonHTTPError, "")

	closed := answering(t, "")
	cfg := closed.config()
	closed.Close()
	got = New(cfg).Judge(context.Background(), refundRules, refundCall(smallRefund))
	checkOutcome(t, got, Escalate, ReasonHTTPError, "")
}

func TestJudgeTimeout(t *testing.T) {
	srv := newChatServer(t, func(int, apiRequest) reply { return reply{delay: 5 * time.Second, content: "{}"} })
	cfg := srv.config()
	cfg.Timeout = 100 * time.Millisecond
	start := time.Now()
	got := New(cfg).Judge(context.Background(), refundRules, refundCall(smallRefund))
	checkOutcome(t, got, Escalate, ReasonTimeout, "")
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("took %v, want about the 100ms timeout", elapsed)
	}
}

func TestJudgeRequestDeadlineBeatsConfigTimeout(t *testing.T) {
	srv := newChatServer(t, func(int, apiRequest) reply { return reply{delay: 5 * time.Second, content: "{}"} })
	cfg := srv.config()
	cfg.Timeout = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	got := New(cfg).Judge(ctx, refundRules, refundCall(smallRefund))
	checkOutcome(t, got, Escalate, ReasonTimeout, "")
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("took %v, want about the 100ms request deadline", elapsed)
	}
}

// ignoringModel is a Model client that does not honour ctx.
type ignoringModel struct{ release chan struct{} }

func (m ignoringModel) Complete(context.Context, Prompt) (string, error) {
	<-m.release
	return modelAnswer("allow", ruleRefund, []string{"42.50"}, ""), nil
}

func TestJudgeReturnsAtDeadlineEvenIfModelIgnoresContext(t *testing.T) {
	m := ignoringModel{release: make(chan struct{})}
	defer close(m.release)
	j := NewWithModel(Config{Timeout: 50 * time.Millisecond}, m)
	checkOutcome(t, j.Judge(context.Background(), refundRules, refundCall(smallRefund)), Escalate, ReasonTimeout, "")
}

func TestJudgeObserve(t *testing.T) {
	srv := answering(t, modelAnswer("allow", ruleRefund, []string{"42.50"}, ""))
	var mu sync.Mutex
	var got []string
	cfg := srv.config()
	cfg.Observe = func(reason string, latency time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, reason)
		if latency <= 0 {
			t.Errorf("latency = %v, want > 0 for a model call", latency)
		}
	}
	New(cfg).Judge(context.Background(), refundRules, refundCall(smallRefund))
	if !slices.Equal(got, []string{ReasonVerified}) {
		t.Errorf("observed %q, want [verified]", got)
	}
}
