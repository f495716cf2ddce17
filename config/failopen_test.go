package config

import (
	"strings"
	"testing"
)

// failOpen is a tenant whose read_rules and policy lists are filled in by
// each case; every entry is on its own line (read_rules line 4, allow
// line 8, deny line 10).
const failOpen = `tenants:
  - id: acme
    read_rules:
      - %s
    members:
      - id: u-1
        policy:
          allow:
            - %s
          deny:
            - %s
`

func failOpenYAML(read, allow, deny string) string {
	y := strings.Replace(failOpen, "%s", read, 1)
	y = strings.Replace(y, "%s", allow, 1)
	return strings.Replace(y, "%s", deny, 1)
}

// TestPatternsThatMatchNoCapabilityDoNotLoad: a policy pattern that can
// match no capability would fail open in a deny list, so it does not load,
// and the error names its line (SPEC §10).
func TestPatternsThatMatchNoCapabilityDoNotLoad(t *testing.T) {
	for _, p := range []string{
		`"delete_*"`, `"tool.call:*"`, `"Tools.Call:*"`, `"tools.call"`, `"tools.call:"`,
		`"tools.call:^rm.*$"`, `"tools.call:(rm|dd)"`, `"tools.call:rm[a-z]+"`, `"tools\\.call:.*"`, `"tools.call:rm?"`,
		`" tools.call:rm"`, `"tools.call:rm "`, `"tools.call: rm"`, `"tools.call:rm\tx"`, `""`, `"*delete me*"`,
		`"tools.call:ｒｍ"`, `"agents.spawn"`, `"delete"`,
	} {
		t.Run(p, func(t *testing.T) {
			_, err := Parse([]byte(failOpenYAML(`"tools.call:read_*"`, `"*"`, p)))
			if err == nil || !strings.Contains(err.Error(), "line 11: member \"u-1\": policy deny") {
				t.Errorf("deny %s: Parse error = %v, want one naming line 11", p, err)
			}
			_, err = Parse([]byte(failOpenYAML(`"tools.call:read_*"`, p, `"tools.call:drop_*"`)))
			if err == nil || !strings.Contains(err.Error(), "line 9: member \"u-1\": policy allow") {
				t.Errorf("allow %s: Parse error = %v, want one naming line 9", p, err)
			}
		})
	}
}

// TestReadRulesBeyondReadsDoNotLoad: a read rule approves at once what it
// matches, so one that reaches beyond reads (every capability, every
// tool, a shell tool, an agents.* capability) does not load; the error
// names its line (SPEC §10).
func TestReadRulesBeyondReadsDoNotLoad(t *testing.T) {
	for _, p := range []string{
		`"*"`, `"**"`, `"*:*"`, `"*read*"`, `"tools.call:*"`, `"tools.call:**"`, `"tools.call:*_*"`, `"tools*"`, `"tools.call*"`,
		`"apps.call:*"`, `"apps.call:conn-7/*"`, `"apps.call:*/*"`, `"apps.call:conn-7*"`,
		`"tools.call:Bash"`, `"tools.call:B*"`, `"tools.call:*sh*"`, `"tools.call:shell"`, `"tools.call:run_*"`, `"apps.call:conn-7/Bash"`,
		`"agents.spawn:*"`, `"agents.delegate:*"`, `"agents.delegate:agt_sub"`, `"agents.*"`, `"a*"`,
		`"delete_*"`, `"Tools.Call:read_*"`, `""`,
	} {
		t.Run(p, func(t *testing.T) {
			_, err := Parse([]byte(failOpenYAML(p, `"*"`, `"tools.call:drop_*"`)))
			if err == nil || !strings.Contains(err.Error(), "line 4: read_rules:") {
				t.Errorf("read_rules %s: Parse error = %v, want one naming line 4", p, err)
			}
		})
	}
}

// TestReadRulesAndPatternsThatLoad: the SPEC's own examples, and patterns
// that name reads or capabilities, load.
func TestReadRulesAndPatternsThatLoad(t *testing.T) {
	for _, c := range []struct{ read, allow, deny string }{
		{`"tools.call:read_*"`, `"*"`, `"apps.call:*/delete_*"`},
		{`"apps.call:conn-7/list_*"`, `"tools.call:*"`, `"*delete*"`},
		{`"tools.call:github.get_*"`, `"agents.spawn:*"`, `"agents.delegate:agt_sub"`},
		{`"tools.call:mcp__fs__read_file"`, `"apps.call:conn-7/*"`, `"tools.call:Bash"`},
		{`"apps.call:*/list_*"`, `"tools*"`, `"*:*"`},
	} {
		if _, err := Parse([]byte(failOpenYAML(c.read, c.allow, c.deny))); err != nil {
			t.Errorf("read %s allow %s deny %s: %v", c.read, c.allow, c.deny, err)
		}
	}
}

// TestReplicasOutOfRangeDoNotLoad: replicas is 1 to 5; given as 0 (or
// null) it is refused at its line, and left out it keeps the broker's
// default (SPEC §10).
func TestReplicasOutOfRangeDoNotLoad(t *testing.T) {
	for _, r := range []string{"0", "6", "-1", "~", "99"} {
		_, err := Parse([]byte("listen: 127.0.0.1:0\nreplicas: " + r + "\n" + base))
		if err == nil || !strings.Contains(err.Error(), "line 2: replicas:") {
			t.Errorf("replicas: %s: Parse error = %v, want one naming line 2", r, err)
		}
	}
	for _, r := range []string{"1", "3", "5"} {
		if _, err := Parse([]byte("replicas: " + r + "\n" + base)); err != nil {
			t.Errorf("replicas: %s: %v", r, err)
		}
	}
}

// TestTokenPolicyPatternsDoNotFailOpen: a token's policy is checked as a
// member's is; a pattern that matches no capability names the token's line.
func TestTokenPolicyPatternsDoNotFailOpen(t *testing.T) {
	const y = `tenants:
  - id: acme
    members:
      - {id: u-1, policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: t1, principal: "agent:agt_main", scopes: [requests:write], policy: {allow: ["*"], deny: [%s]}}
`
	for _, p := range []string{`"delete_*"`, `"tool.call:*"`, `""`} {
		if _, err := Parse([]byte(strings.Replace(y, "%s", p, 1))); err == nil || !strings.Contains(err.Error(), "line 8: token policy") {
			t.Errorf("deny %s: Parse error = %v, want one naming line 8", p, err)
		}
	}
	if _, err := Parse([]byte(strings.Replace(y, "%s", `"tools.call:drop_*"`, 1))); err != nil {
		t.Errorf("a sound token policy does not load: %v", err)
	}
}
