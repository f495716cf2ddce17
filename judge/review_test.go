package judge

import (
	"context"
	"strings"
	"testing"
)

var programmerRules = []Rule{
	{ID: "rul_tests", Text: "Running the test suite with go test may be allowed.", Effect: "allow"},
	{ID: "rul_push", Text: "Never push to the main branch.", Effect: "deny"},
}

func reviewBundle() Bundle {
	return Bundle{AgentID: "programmer", Role: "Senior programmer", Memory: "Working on the judge package.",
		Brief: "Write tests for the judge.", Rules: programmerRules,
		Call: Call{Action: "tools.call", Target: "shell", Arguments: []byte(`{"command":"go test ./judge/"}`), Reason: "run tests"}}
}

func TestReview(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		verdict Verdict
		reason  string
		ruleID  string
		note    string
	}{
		{"allow with valid quote", modelAnswer("allow", programmerRules[0].Text, []string{"go test"}, "Tests are fine. More."),
			Allow, ReasonVerified, "rul_tests", "Tests are fine."},
		{"invented quote", modelAnswer("allow", "Anything the subagent asks may be allowed.", []string{"go test"}, "ok"),
			Abstain, ReasonInvalidQuote, "", ""},
		{"deny rule quoted for allow", modelAnswer("allow", programmerRules[1].Text, []string{"go test"}, "ok"),
			Abstain, ReasonWrongEffect, "", ""},
		{"evidence from the brief", modelAnswer("allow", programmerRules[0].Text, []string{"Write tests"}, "ok"),
			Abstain, ReasonBadEvidence, "", ""},
		{"model abstains", modelAnswer("abstain", "", nil, "Not sure\u202E this is in scope."),
			Abstain, ReasonModelAbstain, "", "Not sure this is in scope."},
		{"escalate is not a review verdict", modelAnswer("escalate", "", nil, "x"),
			Abstain, ReasonMalformed, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := answering(t, tt.answer)
			got := New(srv.config()).Review(context.Background(), reviewBundle())
			if got.Verdict != tt.verdict || got.Reason != tt.reason || got.RuleID != tt.ruleID || got.Note != tt.note {
				t.Errorf("got %+v, want %s/%s/%q note %q", got, tt.verdict, tt.reason, tt.ruleID, tt.note)
			}
		})
	}
}

func TestReviewPrompt(t *testing.T) {
	srv := answering(t, modelAnswer("abstain", "", nil, ""))
	New(srv.config()).Review(context.Background(), reviewBundle())
	req := srv.request(0)
	system, user := req.message("system"), req.message("user")
	if !strings.Contains(system, "on behalf of the AI agent") || !strings.Contains(system, `"allow"|"deny"|"abstain"`) {
		t.Errorf("system message:\n%s", system)
	}
	rv := blockJSON(t, user, "reviewer")
	if rv["role"] != "Senior programmer" || rv["memory"] != "Working on the judge package." || rv["brief"] != "Write tests for the judge." {
		t.Errorf("reviewer block = %v", rv)
	}
	if !strings.Contains(user, programmerRules[0].Text) || blockJSON(t, user, "request")["capability"] != "tools.call:shell" {
		t.Errorf("user message lacks rules or request:\n%s", user)
	}
	if enum := req.ResponseFormat.JSONSchema.Schema; !strings.Contains(string(enum), `"abstain"`) {
		t.Errorf("schema = %s, want abstain in the enum", enum)
	}
}

func TestReviewNoRulesAndFailures(t *testing.T) {
	srv := newChatServer(t, func(int, apiRequest) reply { return reply{status: 500} })
	j := New(srv.config())
	b := reviewBundle()
	if got := j.Review(context.Background(), b); got.Verdict != Abstain || got.Reason != ReasonHTTPError {
		t.Errorf("on HTTP 500 got %+v", got)
	}
	b.Rules = nil
	if got := j.Review(context.Background(), b); got.Verdict != Abstain || got.Reason != ReasonNoRules || srv.count() != 1 {
		t.Errorf("without rules got %+v after %d calls", got, srv.count())
	}
}
