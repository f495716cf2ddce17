package config

import (
	"strings"
	"testing"
	"time"
)

func TestDemoParses(t *testing.T) {
	c := Demo()
	ts, err := c.DomainTenants()
	if err != nil || len(ts) != 1 || ts[0].ID != "demo" || len(ts[0].Tokens) != 4 {
		t.Fatalf("demo = %+v, %v", ts, err)
	}
	if c.Listen != "127.0.0.1:8080" || c.DataDir != "./data" {
		t.Fatalf("defaults: listen %q data %q", c.Listen, c.DataDir)
	}
	if ts[0].Agents["agt_sub"].Parent != "agt_programmer" || ts[0].RequestTimeout.Hours() != 24 || ts[0].ApprovalTTL.Minutes() != 5 {
		t.Fatalf("demo agents or defaults wrong: %+v", ts[0])
	}
}

const base = `tenants:
  - id: acme
    members:
      - id: u-1
        policy: {allow: ["*"]}
      - id: u-2
        policy: {allow: ["*"]}
    agents:
      - {id: a, member: u-1}
`

func TestInvalidConfigsNameTheLine(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"cycle", base + "      - {id: b, member: u-1, parent: c}\n      - {id: c, member: u-1, parent: b}\n", "line 10: agent \"b\": parents form a cycle"},
		{"other member", base + "      - {id: b, member: u-2, parent: a}\n", "line 10: agent \"b\": parent \"a\" works for member \"u-1\""},
		{"unknown parent", base + "      - {id: b, member: u-1, parent: zz}\n", "line 10: agent \"b\": unknown parent"},
		{"bad agent id", base + "      - {id: \"bad id\", member: u-1}\n", "line 10: agent id \"bad id\""},
		{"bad tenant id", "tenants:\n  - id: \"ac me\"\n", "line 2: tenant id"},
		{"unknown field", base + "      - {id: b, member: u-1, colour: red}\n", "line 10: unknown field \"colour\""},
		{"unknown member", base + "      - {id: b, member: nobody}\n", "line 10: agent \"b\": unknown member"},
		{"bad duration", "tenants:\n  - id: t\n    request_timeout: soon\n", "line 2: request_timeout"},
		{"token hash", base + "    tokens:\n      - {token_sha256: abc, principal: \"person:u-1\", scopes: [admin]}\n", "line 11: token_sha256"},
		{"token principal", base + "    tokens:\n      - {token: x, principal: \"agent:nobody\", scopes: [admin]}\n", "line 11: principal"},
		{"token scope", base + "    tokens:\n      - {token: x, principal: \"person:u-1\", scopes: [root]}\n", "line 11: unknown scope"},
		{"top-level typo", "tenantz: []\n", "line 1: unknown field \"tenantz\""},
		{"model reviewer without judge", base + "      - {id: b, member: u-1, reviewer: model}\n", "line 10: agent \"b\": reviewer model needs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestSpecExampleLoads(t *testing.T) {
	y := `listen: 127.0.0.1:8080
data_dir: ./data
nats_url: ""
tenants:
  - id: acme
    request_timeout: 24h
    approval_ttl: 5m
    idempotency_ttl: 24h
    read_rules: ["tools.call:read_*", "apps.call:conn-7/list_*"]
    members:
      - id: u-1
        policy: {allow: ["*"], deny: ["apps.call:*/delete_*"]}
    agents:
      - {id: agt_main, member: u-1, role: "Coordinates the support team."}
      - id: agt_programmer
        member: u-1
        parent: agt_main
        role: "Writes and runs code."
        brief: "Fix the failing refund job."
        memory: "The refund job runs nightly."
        rules: ["Reading files in the repository is always fine."]
        review_timeout: 2m
        reviewer: none
    tokens:
      - {token: "dev-person-u1", principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token_sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", principal: "agent:agt_programmer", scopes: [requests:write, approvals:read, approvals:write]}
    judge:
      base_url: http://127.0.0.1:11434/v1
      model: llama3.1
      api_key_env: JUDGE_API_KEY
      timeout: 20s
`
	c, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := c.DomainTenants()
	if ts[0].Judge == nil || ts[0].Judge.Model != "llama3.1" || len(ts[0].Agents["agt_programmer"].Rules) != 1 {
		t.Fatalf("tenant = %+v", ts[0])
	}
	if !c.PlainTokens() {
		t.Fatal("a plain token must be reported (the server warns)")
	}
}

func TestHTTPLimitsKeys(t *testing.T) {
	c, err := Parse([]byte("max_connections: 50\nhttp_timeouts: {read_header: 1s, read: 300ms, write: 2m, idle: 90s}\n" + DemoYAML))
	if err != nil {
		t.Fatal(err)
	}
	want := HTTPTimeouts{ReadHeader: time.Second, Read: 300 * time.Millisecond, Write: 2 * time.Minute, Idle: 90 * time.Second}
	if c.MaxConnections != 50 || c.HTTPTimeouts != want {
		t.Errorf("got %d %+v, want 50 %+v", c.MaxConnections, c.HTTPTimeouts, want)
	}
	for _, bad := range []string{
		"http_timeouts: {read: 30}\n",
		"http_timeouts: {read: -1s}\n",
		"http_timeouts: {reed: 1s}\n",
		"max_connections: -1\n",
	} {
		if _, err := Parse([]byte(bad + DemoYAML)); err == nil {
			t.Errorf("%q loaded", bad)
		}
	}
}
