package httpapi_test

import (
	"net/http"
	"testing"
)

// spawnApproved has agt_programmer submit agents.spawn:* and the chain
// approve it with scope (main endorses, the person allows).
func spawnApproved(t *testing.T, url, scope string) map[string]any {
	t.Helper()
	prog, main, person := newClient(t, url, "dev-programmer"), newClient(t, url, "dev-main"), newClient(t, url, "dev-person")
	rec := prog.submit(map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{}})
	if str(rec["status"]) != "pending" {
		t.Fatalf("spawn request: status %q, want pending (policy alone does not approve)", rec["status"])
	}
	rec = main.answer(rec, "allow", "").want(t, "main endorses the spawn", http.StatusOK).body
	return person.answer(rec, "allow", scope).want(t, "person allows the spawn", http.StatusOK).body
}

// TestAPIRegisterSubagent: POST /v1/agents with the request_id of an
// approved spawn request (which it claims), then delegation to the own
// subagent is approved at once (SPEC §2 step 2, §5).
func TestAPIRegisterSubagent(t *testing.T) {
	t.Parallel()
	url := startDemo(t)
	prog, main := newClient(t, url, "dev-programmer"), newClient(t, url, "dev-main")

	// Without an approval, spawning is refused.
	prog.do("POST", "/v1/agents", map[string]any{"role": "helper"}).wantProblem(t, "register without approval", http.StatusForbidden, "Forbidden", "")
	// A pending spawn request is not enough.
	pend := prog.submit(map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{"k": 1}})
	prog.do("POST", "/v1/agents", map[string]any{"request_id": pend["id"]}).
		wantProblem(t, "register with a pending spawn request", http.StatusConflict, "RequestConflict", "")
	// A request_id of another capability is refused.
	other := prog.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}})
	prog.do("POST", "/v1/agents", map[string]any{"request_id": other["id"]}).wantProblem(t, "register with a non-spawn request", http.StatusBadRequest, "InvalidRequest", "request_id")
	// Only agents register subagents.
	newClient(t, url, "dev-person").do("POST", "/v1/agents", map[string]any{}).wantProblem(t, "person registers", http.StatusForbidden, "Forbidden", "")

	spawn := spawnApproved(t, url, "once")
	r := prog.do("POST", "/v1/agents", map[string]any{"request_id": spawn["id"], "role": "helper"}).want(t, "register", http.StatusCreated)
	agent, token := obj(r.body["agent"]), str(r.body["token"])
	id := str(agent["id"])
	if !agentIDPattern.MatchString(id) {
		t.Errorf("subagent id %q, want agt_<ULID>", id)
	}
	if got := str(agent["parent"]); got != "agt_programmer" {
		t.Errorf("subagent parent %q, want agt_programmer", got)
	}
	if token == "" {
		t.Fatalf("no token in %s", r.raw)
	}
	if _, leaked := agent["token_sha256"]; leaked {
		t.Errorf("the agent object shows token_sha256")
	}
	if claimed := prog.get(str(spawn["id"])); claimed["claimed_at"] == nil {
		t.Errorf("the spawn request was not claimed by registration")
	}
	prog.do("POST", "/v1/agents", map[string]any{"request_id": spawn["id"]}).
		wantProblem(t, "second registration with the same spawn request", http.StatusConflict, "RequestConflict", "")

	// The subagent's token works; its chain ends in it.
	rec := newClient(t, url, token).pending()
	if got := jsonString(rec["chain"]); got != `["agt_main","agt_programmer","`+id+`"]` {
		t.Errorf("subagent request chain = %s", got)
	}
	if got := jsonString(rec["approver"]); got != `{"id":"agt_programmer","kind":"agent"}` {
		t.Errorf("subagent request approver = %s, want agt_programmer", got)
	}

	delegate := func(c *client, target string) map[string]any {
		return c.submit(map[string]any{"capability": map[string]any{"action": "agents.delegate", "target": target}, "arguments": map[string]any{"task": "x"}})
	}
	own := delegate(prog, id)
	if str(own["status"]) != "approved" || str(obj(obj(own["decision"])["by"])["kind"]) != "own_subagent" {
		t.Errorf("delegation to own subagent: status %q by %s, want approved by own_subagent", own["status"], by(own))
	}
	if own["approver"] != nil {
		t.Errorf("own_subagent approval: approver %v, want null", own["approver"])
	}
	// agt_sub is configured, not registered by agt_programmer: not its own.
	if got := str(delegate(prog, "agt_sub")["status"]); got != "pending" {
		t.Errorf("delegation to a configured child: %q, want pending", got)
	}
	// Another agent delegating to the subagent: not its own.
	if got := str(delegate(main, id)["status"]); got != "pending" {
		t.Errorf("agt_main delegating to agt_programmer's subagent: %q, want pending", got)
	}
}

// TestAPIRegisterSubagentByGrant: after a lifetime approval of
// agents.spawn:*, registration passes steps 1–3 without a request_id.
func TestAPIRegisterSubagentByGrant(t *testing.T) {
	t.Parallel()
	url := startDemo(t)
	spawnApproved(t, url, "lifetime")
	for i := 0; i < 2; i++ {
		r := newClient(t, url, "dev-programmer").do("POST", "/v1/agents", map[string]any{"role": "helper"})
		r.want(t, "register under a lifetime grant", http.StatusCreated)
	}
	// agt_main endorsed, so it holds a lifetime grant too.
	newClient(t, url, "dev-main").do("POST", "/v1/agents", map[string]any{}).want(t, "endorser registers", http.StatusCreated)
	// agt_sub has no grant.
	newClient(t, url, "dev-sub").do("POST", "/v1/agents", map[string]any{}).wantProblem(t, "agt_sub registers", http.StatusForbidden, "Forbidden", "")
}
