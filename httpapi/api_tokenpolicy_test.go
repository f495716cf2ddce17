package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// tokenPolicyYAML gives agt_main two tokens: tok-main as it was, and
// tok-narrow, whose policy allows reads and refunds only and denies the
// large ones.
const tokenPolicyYAML = `tenants:
  - id: acme
    read_rules: ["tools.call:read_*", "tools.call:list_*"]
    members:
      - id: u-1
        policy: {allow: ["tools.call:*"], deny: ["tools.call:drop_*"]}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read]}
      - token: tok-narrow
        principal: "agent:agt_main"
        scopes: [requests:write, approvals:read]
        policy: {allow: ["tools.call:read_*", "tools.call:issue_refund", "tools.call:drop_*"], deny: ["tools.call:read_secrets"]}
`

// TestAPITokenPolicyNarrowsNeverWidens: a token's own policy is step 1
// beside the member's (SPEC §2): a call must pass both. It narrows before a
// read rule could approve, and it cannot allow what the member denies.
func TestAPITokenPolicyNarrowsNeverWidens(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, servertest.WithConfig(tokenPolicyYAML)).URL
	main, narrow := newClient(t, url, "tok-main"), newClient(t, url, "tok-narrow")
	for _, c := range []struct {
		name       string
		c          *client
		tool       string
		wantStatus string
		wantBy     string
	}{
		{"the token denies a read the tenant would approve", narrow, "read_secrets", "denied", "policy/u-1"},
		{"no allow pattern of the token matches", narrow, "list_files", "denied", "policy/u-1"},
		{"the token allows what the member denies: denied", narrow, "drop_table", "denied", "policy/u-1"},
		{"both allow a read", narrow, "read_file", "approved", "read/tools.call:read_*"},
		{"both allow: the person decides", narrow, "issue_refund", "pending", ""},
		{"the same agent's other token is not narrowed", main, "list_files", "approved", "read/tools.call:list_*"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := c.c.submit(map[string]any{"tool": c.tool, "arguments": map[string]any{"x": 1}})
			if got := str(rec["status"]); got != c.wantStatus {
				t.Fatalf("status = %q, want %q; record %v", got, c.wantStatus, rec)
			}
			if c.wantStatus == "pending" {
				return
			}
			checkAutoDecision(t, rec, c.wantStatus, c.wantBy, 5*time.Minute)
			if c.wantStatus == "denied" && c.c == narrow && c.tool != "drop_table" {
				if note := str(obj(rec["decision"])["note"]); !strings.Contains(note, "token") {
					t.Errorf("decision.note = %q, want it to say the token refused", note)
				}
			}
		})
	}
}

// TestAPITokenPolicyBindsSpawning: a registration without a request_id
// passes steps 1–3 (here a lifetime grant for agents.spawn:*) only when the
// token's own policy allows agents.spawn too.
func TestAPITokenPolicyBindsSpawning(t *testing.T) {
	t.Parallel()
	cfg := strings.Replace(tokenPolicyYAML, `policy: {allow: ["tools.call:*"]`, `policy: {allow: ["tools.call:*", "agents.spawn:*"]`, 1)
	url := servertest.Start(t, servertest.WithConfig(cfg)).URL
	main, narrow, person := newClient(t, url, "tok-main"), newClient(t, url, "tok-narrow"), newClient(t, url, "tok-person")
	spawn := map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{}}
	if rec := narrow.submit(spawn); str(rec["status"]) != "denied" {
		t.Fatalf("spawn request with the narrow token: %v, want denied by its policy", rec["status"])
	}
	rec := main.submit(spawn)
	person.answer(rec, "allow", "lifetime").want(t, "the person allows spawning for good", 200)
	if r := narrow.do("POST", "/v1/agents", map[string]any{"role": "Helps."}); r.status != 403 {
		t.Fatalf("register with the narrow token under the grant: %d %s, want 403", r.status, r.raw)
	}
	main.do("POST", "/v1/agents", map[string]any{"role": "Helps."}).want(t, "register with the agent's other token", 201)
}
