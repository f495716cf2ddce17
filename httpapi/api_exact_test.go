package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestAPIExactFieldNames: a field name matches only byte-for-byte (SPEC
// §5). "DECISION" beside "decision" was taken as the decision (encoding/json
// folds case, and 'ſ' U+017F to 's', U+212A to 'k'): now every such name
// is an unknown field, 400 naming it, and the request is left as it was.
func TestAPIExactFieldNames(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.pending()
	id := str(rec["id"])
	for _, tc := range []struct {
		name, path, body, field string
		c                       *client
	}{
		{"DECISION beside decision", "/v1/requests/" + id, `{"expected":0,"decision":"deny","DECISION":"allow"}`, "DECISION", person},
		{"Decision alone", "/v1/requests/" + id, `{"expected":0,"Decision":"allow"}`, "Decision", person},
		{"Expected", "/v1/requests/" + id, `{"Expected":0,"decision":"allow"}`, "Expected", person},
		{"long s in scope", "/v1/requests/" + id, `{"expected":0,"decision":"allow","ſcope":"lifetime"}`, "ſcope", person},
		{"Tool", "/v1/requests", `{"Tool":"deploy","arguments":{}}`, "Tool", main},
		{"Arguments", "/v1/requests", `{"tool":"deploy","Arguments":{}}`, "Arguments", main},
		{"long s in session", "/v1/requests", `{"tool":"deploy","arguments":{},"ſession":"ses-1"}`, "ſession", main},
		{"escaped long s", "/v1/requests", `{"tool":"deploy","arguments":{},"\u017fession":"ses-1"}`, "ſession", main},
		{"Kelvin sign in subject", "/v1/requests", `{"tool":"Bash","arguments":{"command":"ls"},"subject":{"\u212aind":"shell"}}`, "subject.\u212aind", main},
		{"connection ID", "/v1/requests", `{"capability":{"action":"apps.call","target":"conn-7/list"},"arguments":{},"connection":{"ID":"conn-7"}}`, "connection.ID", main},
		{"capability Target", "/v1/requests", `{"capability":{"action":"tools.call","Target":"deploy"},"arguments":{}}`, "capability.Target", main},
		{"CALL_DIGEST", "/v1/requests/" + id + "/claim", `{"CALL_DIGEST":"` + str(rec["call_digest"]) + `"}`, "CALL_DIGEST", main},
		{"rule Text", "/v1/agents/agt_main/rules", `{"Text":"never deploy on Fridays"}`, "Text", person},
		{"register Role", "/v1/agents", `{"Role":"helper"}`, "Role", main},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.do("POST", tc.path, tc.body).wantProblem(t, tc.name, http.StatusBadRequest, "InvalidRequest", tc.field)
		})
	}
	if got := person.get(id); num(got["revision"]) != 0 || str(got["status"]) != "pending" {
		t.Errorf("refused bodies changed the request: %v at revision %v", got["status"], got["revision"])
	}
	if got := adminCount(t, url); got != 1 {
		t.Errorf("refused bodies: admin sees %d requests, want 1", got)
	}
	// Keys of the call's own arguments are the tool's: any case, any script.
	body := `{"tool":"deploy","arguments":{"Tool":1,"ſession":{"DECISION":"allow"}}}`
	main.do("POST", "/v1/requests", body).want(t, "free keys in arguments", http.StatusCreated)
}

// TestAPIToolNames: a tool name is 1–128 bytes of letters, digits and
// "_.:/@-" (SPEC §5), whether given as tool or as a tools.call target;
// anything else is 400 naming the field, and creates nothing. The names
// harnesses use (Claude Code's Bash and mcp__server__tool, Gemini's
// run_shell_command) pass.
func TestAPIToolNames(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	for _, tc := range []struct{ name, tool string }{
		{"Slack markup", "<!channel> <https://evil.example|Approve here>"},
		{"space", "read file"},
		{"129 bytes", strings.Repeat("t", 129)},
		{"newline", "deploy\n"},
		{"Cyrillic look-alike", "dеploy"},
		{"right-to-left override", "deploy\u202e"},
		{"zero-width space", "de\u200bploy"},
		{"asterisk", "deploy*"},
		{"backtick", "`deploy`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			main.do("POST", "/v1/requests", map[string]any{"tool": tc.tool, "arguments": map[string]any{}}).
				wantProblem(t, "tool "+tc.name, http.StatusBadRequest, "InvalidRequest", "tool")
			main.do("POST", "/v1/requests", map[string]any{"capability": map[string]any{"action": "tools.call", "target": tc.tool}, "arguments": map[string]any{}}).
				wantProblem(t, "target "+tc.name, http.StatusBadRequest, "InvalidRequest", "capability.target")
		})
	}
	if got := adminCount(t, url); got != 0 {
		t.Errorf("bad tool names created %d requests, want 0", got)
	}
	for _, tool := range []string{"Bash", "mcp__github__create_issue", "run_shell_command", "a.b:c/d@e-f_g", strings.Repeat("t", 128)} {
		// A shell tool's call needs its command (SPEC §8); others take it as data.
		main.do("POST", "/v1/requests", map[string]any{"tool": tool, "arguments": map[string]any{"command": "ls"}}).want(t, "tool "+tool, http.StatusCreated)
	}
}
