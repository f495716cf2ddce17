package httpapi_test

import (
	"net/http"
	"testing"
)

// What the server can check of a submit itself, it checks: a connection
// is the one the apps.call's target names, and binds only an apps.call;
// only a shell subject has a command; agents.spawn's target is *. Each refusal is 400 naming the field and
// stores nothing.
func TestAPISubmitFieldsChecked(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	apps := func(target string) map[string]any { return map[string]any{"action": "apps.call", "target": target} }
	for name, body := range map[string]map[string]any{
		"connection of the target":     {"capability": apps("conn-7/send"), "arguments": map[string]any{}, "connection": map[string]any{"id": "conn-7", "revision": 3}},
		"connection id holding a /":    {"capability": apps("org/mail/send"), "arguments": map[string]any{}, "connection": map[string]any{"id": "org/mail", "revision": 0}},
		"apps.call with no connection": {"capability": apps("conn-7/send"), "arguments": map[string]any{}},
		"agents.spawn:*":               {"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{}},
	} {
		main.do("POST", "/v1/requests", body).want(t, name, http.StatusCreated)
	}
	before := adminCount(t, url)
	for _, tc := range []struct {
		name, field string
		body        map[string]any
	}{
		// A read rule (apps.call:conn-7/list_*) must not approve a call
		// bound to another connection.
		{"another connection than the target's", "connection.id",
			map[string]any{"capability": apps("conn-7/list_users"), "arguments": map[string]any{}, "connection": map[string]any{"id": "conn-9", "revision": 1}}},
		{"a connection id that is only a prefix", "connection.id",
			map[string]any{"capability": apps("conn-77/send"), "arguments": map[string]any{}, "connection": map[string]any{"id": "conn-7", "revision": 1}}},
		{"a connection on a tools.call", "connection",
			map[string]any{"tool": "deploy", "arguments": map[string]any{}, "connection": map[string]any{"id": "conn-7", "revision": 1}}},
		{"a negative revision", "connection.revision",
			map[string]any{"capability": apps("conn-7/send"), "arguments": map[string]any{}, "connection": map[string]any{"id": "conn-7", "revision": -1}}},
		// Live clients show subject.command as what the call runs.
		{"a command on a tool subject", "subject.command",
			map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}, "subject": map[string]any{"kind": "tool", "command": "ls"}}},
		{"a command on a subject of another kind", "subject.command",
			map[string]any{"tool": "deploy", "arguments": map[string]any{}, "subject": map[string]any{"kind": "computer_use", "command": "ls"}}},
		{"agents.spawn of a name", "capability.target",
			map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "agt_new"}, "arguments": map[string]any{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			main.do("POST", "/v1/requests", tc.body).wantProblem(t, tc.name, http.StatusBadRequest, "InvalidRequest", tc.field)
		})
	}
	if got := adminCount(t, url); got != before {
		t.Errorf("refused submits stored %d requests, want none", got-before)
	}
}
