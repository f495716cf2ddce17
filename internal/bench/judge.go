package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/countersign/countersign/config"
)

// benchRule is the rule the scripted model quotes.
const benchRule = "Refunds in GBP for a confirmed duplicate charge may be issued."

// judgeScenario: agt_main has a rule; a scripted chat-completions server
// (real HTTP, answering at once) quotes it; every submit is decided by rule
// in its 201. The model costs nothing here, so the figure is the judge's
// own overhead: prompt, HTTP round trip, verification.
func judgeScenario(ctx context.Context, o Options) (Result, error) {
	model, err := scriptedModel()
	if err != nil {
		return Result{}, err
	}
	defer model.Close()
	yaml := fmt.Sprintf(`tenants:
  - id: demo
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents:
      - {id: agt_main, member: u-1, rules: [%q]}
    tokens:
      - {token: dev-main, principal: "agent:agt_main", scopes: [requests:write]}
    judge: {base_url: "http://%s/v1", model: scripted, timeout: 5s}
`, benchRule, model.Addr)
	cfg, err := config.Parse([]byte(unthrottled(yaml)))
	if err != nil {
		return Result{}, err
	}
	o.URL = ""
	return withServer(ctx, o, cfg, func(ctx context.Context, o Options) (Result, error) {
		c := &client{url: o.URL, token: "dev-main", http: newHTTPClient(o.Concurrency)}
		var n atomic.Int64
		return run(ctx, o.Concurrency, o.Duration, func(ctx context.Context, _ int) error {
			body := mustJSON(map[string]any{"tool": "issue_refund", "arguments": map[string]any{"n": n.Add(1), "currency": "GBP", "amount": 4900}})
			r, err := c.call(ctx, "POST", "/v1/requests", body, http.StatusCreated)
			if err == nil && (r.Decision == nil || r.Decision.By.Kind != "rule") {
				err = fmt.Errorf("request %s was not decided by rule (%s)", r.ID, r.Status)
			}
			return err
		}), nil
	})
}

// scriptedModel serves the chat-completions protocol on loopback and always
// answers an allow that quotes benchRule with evidence "GBP".
func scriptedModel() (*http.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	verdict, _ := json.Marshal(map[string]any{"verdict": "allow", "quote": benchRule, "evidence": []string{"GBP"}, "rationale": "The rule covers GBP duplicate-charge refunds."})
	answer, _ := json.Marshal(map[string]any{"id": "chatcmpl-bench", "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(verdict)}}}})
	srv := &http.Server{Addr: ln.Addr().String(), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}
