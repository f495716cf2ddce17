package config_test

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/config"
)

const shadowYAML = `tenants:
  - id: acme
    read_rules: ["tools.call:read_*", {match: "tools.call:lookup_*", mode: shadow}, {match: "tools.call:list_*"}]
    groups:
      - {id: finance, members: [u-1]}
    approval_policies:
      - {id: refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, mode: shadow}
    members:
      - {id: u-1, policy: {allow: ["*"]}}
`

// A read rule and an approval policy in shadow mode are kept apart from
// those that decide; a bad mode or key is refused with its line.
func TestShadowMode(t *testing.T) {
	c, err := config.Parse([]byte(shadowYAML))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := c.DomainTenants()
	if err != nil {
		t.Fatal(err)
	}
	ten := ts[0]
	if got := strings.Join(ten.ReadRules, " "); got != "tools.call:read_* tools.call:list_*" {
		t.Errorf("read rules %q; want read_* and list_*", got)
	}
	if got := strings.Join(ten.ShadowReadRules, " "); got != "tools.call:lookup_*" {
		t.Errorf("shadow read rules %q; want lookup_*", got)
	}
	if len(ten.ApprovalPolicies) != 1 || !ten.ApprovalPolicies[0].Shadow {
		t.Errorf("approval policies %+v; want refunds in shadow", ten.ApprovalPolicies)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"mode: shadow}, {", "mode: dry}, {", `line 3: read_rules: mode: "dry"`},
		{"{match: \"tools.call:list_*\"}", "{pattern: \"tools.call:list_*\"}", `line 3: read_rules: unknown key "pattern"`},
		{"{match: \"tools.call:lookup_*\", mode: shadow}", "{match: \"tools.call:*\", mode: shadow}", "line 3"},
		{"approvers: {group: finance}, mode: shadow}", "approvers: {group: finance}, mode: loud}", `line 7: approval policy "refunds": mode: "loud"`},
	} {
		_, err := config.Parse([]byte(strings.Replace(shadowYAML, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.to, err, tc.want)
		}
	}
}
