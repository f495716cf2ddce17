package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// scripted is a real HTTP server speaking the chat-completions protocol
// that answers with the content the test sets.
type scripted struct {
	*httptest.Server
	mu      sync.Mutex
	content string
	status  int
	calls   int
	delay   time.Duration
}

func newScripted(t *testing.T) *scripted {
	s := &scripted{status: 200}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string            `json:"model"`
			Messages []json.RawMessage `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) < 2 {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		s.mu.Lock()
		content, status, delay := s.content, s.status, s.delay
		s.calls++
		s.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scripted) answer(status int, v any) {
	b, _ := json.Marshal(v)
	s.mu.Lock()
	s.content, s.status = string(b), status
	s.mu.Unlock()
}

const refundRule = "Refunds in GBP for a confirmed duplicate charge may be issued."

func judgeConfig(model string, reviewer string) string {
	return fmt.Sprintf(`tenants:
  - id: demo
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents:
      - {id: agt_main, member: u-1, role: "Coordinates support.", rules: [%q], reviewer: %s}
      - {id: agt_programmer, member: u-1, parent: agt_main, role: "Writes code."}
    tokens:
      - {token: dev-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: dev-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: dev-programmer, principal: "agent:agt_programmer", scopes: [requests:write, approvals:read]}
    judge: {base_url: "%s/v1", model: scripted, timeout: 2s}
`, refundRule, reviewer, model)
}

type judged struct {
	record
	JudgeEscalated bool    `json:"judge_escalated"`
	ReviewerReason *string `json:"reviewer_reason"`
	Decision       *struct {
		Status     string
		By         struct{ Kind, ID string }
		QuotedRule string `json:"quoted_rule"`
	} `json:"decision"`
}

func TestJudgeThroughHTTP(t *testing.T) {
	model := newScripted(t)
	srv := servertest.Start(t, servertest.WithConfig(judgeConfig(model.URL, "none")))
	main := newClient(srv.URL, "dev-main")
	submit := func() judged {
		var r judged
		if code := main.do(t, "POST", "/v1/requests", map[string]any{"tool": "issue_refund",
			"arguments": map[string]any{"currency": "GBP", "amount": 4900}, "reason": "Duplicate charge."}, nil, &r); code != 201 {
			t.Fatalf("submit: %d", code)
		}
		return r
	}

	model.answer(200, map[string]any{"verdict": "allow", "quote": refundRule, "evidence": []string{"GBP"}, "rationale": "Covered."})
	r := submit()
	if r.Status != "approved" || r.Decision.By.Kind != "rule" || !strings.HasPrefix(r.Decision.By.ID, "rul_") || r.Decision.QuotedRule != refundRule || r.JudgeEscalated {
		t.Fatalf("verified allow: %+v %+v", r, r.Decision)
	}

	hostile := "The amount needs a person.\u202e Ignore this\u0007 second sentence. " + strings.Repeat("x", 300)
	model.answer(200, map[string]any{"verdict": "escalate", "quote": "", "evidence": []string{}, "rationale": hostile})
	r = submit()
	if r.Status != "pending" || !r.JudgeEscalated || r.ReviewerReason == nil || *r.ReviewerReason != "The amount needs a person." {
		t.Fatalf("escalate: status %s escalated %v reason %v", r.Status, r.JudgeEscalated, r.ReviewerReason)
	}

	for _, want := range []string{`countersign_judge_outcomes_total{reason="verified",tenant="demo"} 1`,
		`countersign_judge_outcomes_total{reason="model_escalate",tenant="demo"} 1`, "countersign_judge_model_latency_seconds_count 2"} {
		if m := metricsText(t, srv.URL); !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	for name, step := range map[string]func(){
		"invented quote": func() {
			model.answer(200, map[string]any{"verdict": "allow", "quote": "Refunds may always be issued.", "evidence": []string{"GBP"}, "rationale": "ok"})
		},
		"http 500": func() { model.answer(500, map[string]any{"error": "boom"}) },
		"malformed": func() {
			model.mu.Lock()
			model.content, model.status = `{"verdict": "allow", "quote": `, 200
			model.mu.Unlock()
		},
	} {
		step()
		r = submit()
		if r.Status != "pending" || !r.JudgeEscalated || r.ReviewerReason != nil {
			t.Errorf("%s: status %s escalated %v reason %v; want pending, escalated, no reason", name, r.Status, r.JudgeEscalated, r.ReviewerReason)
		}
	}
}

func TestRulesAPIAndAnswerRule(t *testing.T) {
	model := newScripted(t)
	srv := servertest.Start(t, servertest.WithConfig(judgeConfig(model.URL, "none")))
	person, prog := newClient(srv.URL, "dev-person"), newClient(srv.URL, "dev-programmer")
	var added struct{ ID, Text, Effect string }
	if code := person.do(t, "POST", "/v1/agents/agt_programmer/rules", map[string]any{"text": "Reading logs is fine.", "effect": "allow"}, nil, &added); code != 201 || added.ID == "" {
		t.Fatalf("add rule: %d %+v", code, added)
	}
	var r record
	prog.do(t, "POST", "/v1/requests", map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}}, nil, &r)
	main := newClient(srv.URL, "dev-main")
	main.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow"}, nil, nil)
	if code := person.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 1, "decision": "deny", "rule": "Deploys to prod need a change ticket."}, nil, nil); code != 200 {
		t.Fatalf("answer with rule: %d", code)
	}
	var rules struct{ Items []struct{ ID, Text string } }
	person.do(t, "GET", "/v1/agents/agt_programmer/rules", nil, nil, &rules)
	if len(rules.Items) != 2 || rules.Items[1].Text != "Deploys to prod need a change ticket." {
		t.Fatalf("rules = %+v", rules.Items)
	}
	if code := person.do(t, "DELETE", "/v1/agents/agt_programmer/rules/"+added.ID, nil, nil, nil); code != 204 {
		t.Fatalf("delete rule: %d", code)
	}
	if code := prog.do(t, "POST", "/v1/agents/agt_programmer/rules", map[string]any{"text": "Anything goes."}, nil, nil); code != 403 {
		t.Fatalf("an agent without approvals:write adding its own rule: %d, want 403", code)
	}
}

// agt_main reviews with the built-in model reviewer. A verified allow by
// a decider who does not hold the capability is only an endorsement; a
// verified deny decides; an invented quote abstains, passing it up.
func TestModelReviewer(t *testing.T) {
	model := newScripted(t)
	srv := servertest.Start(t, servertest.WithConfig(judgeConfig(model.URL, "model")))
	prog, person := newClient(srv.URL, "dev-programmer"), newClient(srv.URL, "dev-person")
	tests := []struct {
		name      string
		answer    map[string]any
		wantState string
		wantKind  string
		endorsed  bool
	}{
		{"allow endorses", map[string]any{"verdict": "allow", "quote": refundRule, "evidence": []string{"GBP"}, "rationale": "Fine."}, "pending", "person", true},
		{"deny decides", map[string]any{"verdict": "deny", "quote": refundRule, "evidence": []string{"GBP"}, "rationale": "No."}, "denied", "agent", false},
		{"invented abstains", map[string]any{"verdict": "allow", "quote": "All refunds are fine.", "evidence": []string{"GBP"}, "rationale": "?"}, "pending", "person", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model.answer(200, tt.answer)
			var r record
			prog.do(t, "POST", "/v1/requests", map[string]any{"tool": "issue_refund", "arguments": map[string]any{"currency": "GBP"}}, nil, &r)
			var got struct {
				record
				Endorsements []struct{ Agent string } `json:"endorsements"`
			}
			testutil.Eventually(t, 10*time.Second, func() bool {
				person.do(t, "GET", "/v1/requests/"+r.ID, nil, nil, &got)
				return got.Revision > 0
			}, "the model reviewer answers")
			if got.Status != tt.wantState || (got.Approver.Kind != tt.wantKind) || (len(got.Endorsements) > 0) != tt.endorsed {
				t.Fatalf("status %s approver %+v endorsements %+v", got.Status, got.Approver, got.Endorsements)
			}
		})
	}
}

func metricsText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// A model slower than the request's own deadline cannot hold the submit:
// the judge gives up at the deadline and the request goes on, escalated,
// never allowed.
func TestSlowModelPastTheDeadline(t *testing.T) {
	model := newScripted(t)
	model.answer(200, map[string]any{"verdict": "allow", "quote": refundRule, "evidence": []string{"GBP"}, "rationale": "Late."})
	model.mu.Lock()
	model.delay = 10 * time.Second
	model.mu.Unlock()
	// The judge's own timeout is long: only the request's deadline bounds it.
	cfg := strings.Replace(judgeConfig(model.URL, "none"), "timeout: 2s", "timeout: 60s", 1)
	srv := servertest.Start(t, servertest.WithConfig(cfg))
	start := time.Now()
	var r judged
	code := newClient(srv.URL, "dev-main").do(t, "POST", "/v1/requests", map[string]any{"tool": "issue_refund",
		"arguments": map[string]any{"currency": "GBP"}, "timeout": "1s"}, nil, &r)
	if took := time.Since(start); code != 201 || took > 5*time.Second {
		t.Fatalf("submit: %d after %v; want 201 within the request's 1s deadline (plus slack)", code, took)
	}
	if r.Status == "approved" || !r.JudgeEscalated {
		t.Fatalf("status %s, judge_escalated %v; want escalated, not approved", r.Status, r.JudgeEscalated)
	}
}

// Grants are step 3 and the judge step 4 (SPEC §2): a request a grant
// decides never reaches the model, even one that would deny it.
func TestJudgeNotAskedWhenAGrantDecides(t *testing.T) {
	model := newScripted(t)
	srv := servertest.Start(t, servertest.WithConfig(judgeConfig(model.URL, "none")))
	main, person := newClient(srv.URL, "dev-main"), newClient(srv.URL, "dev-person")
	model.answer(200, map[string]any{"verdict": "escalate", "quote": "", "evidence": []string{}, "rationale": "Not covered."})
	deploy := func() judged {
		var r judged
		if code := main.do(t, "POST", "/v1/requests", map[string]any{"tool": "issue_refund", "arguments": map[string]any{"currency": "GBP"}}, nil, &r); code != 201 {
			t.Fatalf("submit: %d", code)
		}
		return r
	}
	r := deploy()
	if code := person.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow", "scope": "lifetime"}, nil, nil); code != 200 {
		t.Fatalf("allow for lifetime: %d", code)
	}
	model.answer(200, map[string]any{"verdict": "deny", "quote": refundRule, "evidence": []string{"GBP"}, "rationale": "Denied by the rule."})
	model.mu.Lock()
	before := model.calls
	model.mu.Unlock()
	if r = deploy(); r.Status != "approved" || r.Decision.By.Kind != "grant" {
		t.Errorf("with a lifetime allow grant: %s by %s, want approved by the grant", r.Status, r.Decision.By.Kind)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if model.calls != before {
		t.Errorf("the model was asked %d times for a request a grant decides", model.calls-before)
	}
}
