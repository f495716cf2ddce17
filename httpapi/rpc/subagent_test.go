package rpc_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestSubagentOrigin: a registered subagent's approval, shown on the
// session it shares with its parent, carries subagentOrigin; its parent's
// own approval there does not.
func TestSubagentOrigin(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"sessionIds": []string{"ses-p"}})
	main := dial(t, s.URL, tokMain)
	main.subscribe(map[string]any{"inbox": true})

	spawn := submit(t, s, tokProg, map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "session": "ses-p"})["id"].(string)
	if d := main.decide(main.expect("approval/requested", spawn), "allow_once"); d.Error != nil { // endorse
		t.Fatalf("endorse spawn: %s", d.raw)
	}
	n := w.expect("approval/requested", spawn)
	if _, ok := n.Params["subagentOrigin"]; ok {
		t.Errorf("the parent's own approval has subagentOrigin: %s", n.raw)
	}
	w.expect("approval/updated", spawn) // the endorsement moved it to the person
	if d := w.decide(n, "allow_once"); d.Error == nil {
		t.Fatalf("deciding an outdated requirement succeeded: %s", d.raw)
	}
	rec := record(t, s, tokPerson, spawn)
	if code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+spawn, tokPerson, map[string]any{"expected": rec["revision"], "decision": "allow"}); code != http.StatusOK {
		t.Fatalf("allow spawn: %d %s", code, data)
	}
	code, data := s.API(t).Do(http.MethodPost, "/v1/agents", tokProg, map[string]any{"request_id": spawn, "role": "helper"})
	if code != http.StatusCreated {
		t.Fatalf("register: %d %s", code, data)
	}
	var reg struct {
		Agent struct {
			ID string `json:"id"`
		} `json:"agent"`
		Token string `json:"token"`
	}
	_ = json.Unmarshal(data, &reg)
	child := submit(t, s, reg.Token, map[string]any{"tool": "grep", "session": "ses-p"})["id"].(string)
	var cn msg
	for cn = w.next(); cn.Params["approvalId"] != child; cn = w.next() {
	}
	origin, _ := cn.Params["subagentOrigin"].(map[string]any)
	if origin["agentId"] != reg.Agent.ID || origin["parentAgentId"] != "agt_prog" {
		t.Errorf("subagentOrigin %v, want %s under agt_prog", cn.Params["subagentOrigin"], reg.Agent.ID)
	}
}
