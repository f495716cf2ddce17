package rpc_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// escalatingJudge is a real chat-completions endpoint whose judge always
// escalates with a rationale.
func escalatingJudge(t *testing.T) string {
	content, _ := json.Marshal(map[string]any{"verdict": "escalate", "quote": "", "evidence": []string{},
		"rationale": "The amount is unusually large. Ask the owner."})
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(content)}}}})
	}))
	t.Cleanup(h.Close)
	return h.URL
}

// TestJudgeEscalatedAndReviewerReason: a live approval/requested carries
// the record's judgeEscalated and reviewerReason, and so does a new
// connection's first showing of it (approval/subscribe's snapshot); the
// same request re-sent by session/resume (after a server restart) has
// judgeEscalated false, as SPEC §8 says, and so has the re-send for its
// next stage.
func TestJudgeEscalatedAndReviewerReason(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, servertest.WithConfig(fmt.Sprintf(`tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents:
      - {id: agt_main, member: u-1, rules: ["Refunds under 50 GBP may be issued."]}
    tokens:
      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write]}
    judge: {base_url: "%s/v1", model: m, timeout: 5s}
`, escalatingJudge(t))))
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"sessionIds": []string{"ses-j"}})
	id := submit(t, s, tokMain, map[string]any{"tool": "Bash", "session": "ses-j", "arguments": map[string]any{"command": "ls && rm -rf /tmp/x"},
		"subject": map[string]any{"kind": "shell", "command": "ls && rm -rf /tmp/x"}})["id"].(string)
	live := w.expect("approval/requested", id)
	if live.Params["judgeEscalated"] != true || live.Params["reviewerReason"] != "The amount is unusually large." {
		t.Errorf("live: judgeEscalated %v, reviewerReason %v", live.Params["judgeEscalated"], live.Params["reviewerReason"])
	}
	again := dial(t, s.URL, tokPerson)
	again.subscribe(map[string]any{"sessionIds": []string{"ses-j"}})
	if n := again.expect("approval/requested", id); n.Params["judgeEscalated"] != true || n.Params["reviewerReason"] == nil {
		t.Errorf("first showing: judgeEscalated %v, reviewerReason %v", n.Params["judgeEscalated"], n.Params["reviewerReason"])
	}
	s.Restart(t)
	after := dial(t, s.URL, tokPerson)
	if m := after.call("session/resume", map[string]any{"sessionId": "ses-j"}); m.Error != nil {
		t.Fatalf("session/resume: %s", m.raw)
	}
	n := after.expect("approval/request", id)
	if n.Params["judgeEscalated"] != false {
		t.Errorf("after a restart: judgeEscalated %v", n.Params["judgeEscalated"])
	}
	// The next stage's re-send keeps what the opening said.
	if d := after.decide(n, "allow_once"); d.Error != nil {
		t.Fatalf("allow stage 0: %s", d.raw)
	}
	if n := after.expect("approval/request", id); n.Params["judgeEscalated"] != false {
		t.Errorf("stage re-send after a re-issue: judgeEscalated %v", n.Params["judgeEscalated"])
	}
}
