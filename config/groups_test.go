package config

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
)

const groupsYAML = `tenants:
  - id: acme
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
    groups:
      - id: finance
        members: [u-1, u-2, u-3]
    approval_policies:
      - id: big-refunds
        match:
          - "tools.call:issue_refund"
        approvers: {group: finance}
        approve: 2
      - id: deploys
        match: ["tools.call:deploy_*"]
        approvers: {group: finance}
`

// TestGroupsLoad: groups and approval policies reach the tenant; approve
// defaults to 1; the first policy in file order applies; People stands a
// group for its members and a person for themselves.
func TestGroupsLoad(t *testing.T) {
	c, err := Parse([]byte(groupsYAML))
	if err != nil {
		t.Fatal(err)
	}
	ten, err := c.Tenants[0].Tenant()
	if err != nil {
		t.Fatal(err)
	}
	g := ten.Groups["finance"]
	if g == nil || len(g.Members) != 3 || g.Members[1] != "u-2" {
		t.Fatalf("group = %+v", g)
	}
	p := ten.ApprovalPolicyFor(domain.Capability{Action: "tools.call", Target: "issue_refund"})
	if p == nil || p.ID != "big-refunds" || p.Approve != 2 || p.Group != "finance" {
		t.Fatalf("policy = %+v", p)
	}
	if p := ten.ApprovalPolicyFor(domain.Capability{Action: "tools.call", Target: "deploy_prod"}); p == nil || p.Approve != 1 {
		t.Fatalf("deploy policy = %+v", p)
	}
	if p := ten.ApprovalPolicyFor(domain.Capability{Action: "tools.call", Target: "read"}); p != nil {
		t.Fatalf("unmatched capability got policy %+v", p)
	}
	if got := ten.People(domain.Ref{Kind: domain.KindGroup, ID: "finance"}); len(got) != 3 {
		t.Fatalf("People(group) = %v", got)
	}
	if got := ten.People(domain.Ref{Kind: domain.KindPerson, ID: "u-2"}); len(got) != 1 || got[0] != "u-2" {
		t.Fatalf("People(person) = %v", got)
	}
	for _, r := range []domain.Ref{{Kind: domain.KindGroup, ID: "nope"}, {Kind: domain.KindAgent, ID: "u-1"}, {Kind: domain.KindPerson, ID: "u-9"}} {
		if got := ten.People(r); got != nil {
			t.Fatalf("People(%v) = %v, want nobody", r, got)
		}
	}
}

// TestGroupsRefused: each bad group or policy does not load, and the error
// names the line and the field.
func TestGroupsRefused(t *testing.T) {
	tests := []struct{ name, old, new, want string }{
		{"unknown member", "members: [u-1, u-2, u-3]", "members: [u-1, u-9, u-3]", `line 9: group "finance": members: unknown member "u-9"`},
		{"member twice", "members: [u-1, u-2, u-3]", "members: [u-1, u-1, u-3]", `line 9: group "finance": members: "u-1" appears twice`},
		{"empty group", "members: [u-1, u-2, u-3]", "members: []", `line 8: group "finance": members: at least one member`},
		{"bad group id", "- id: finance", "- id: fin ance", `line 8: group id "fin ance"`},
		{"unknown group", "approvers: {group: finance}\n        approve: 2", "approvers: {group: legal}\n        approve: 2", `line 14: approval policy "big-refunds": approvers: unknown group "legal"`},
		{"no group", "approvers: {group: finance}\n        approve: 2", "approve: 2", `line 11: approval policy "big-refunds": approvers: group is required`},
		{"approve above group", "approve: 2", "approve: 4", `line 15: approval policy "big-refunds": approve: 4 is more than group "finance"'s 3 members`},
		{"approve zero", "approve: 2", "approve: 0", `line 15: approval policy "big-refunds": approve: 0 is less than 1`},
		{"approve negative", "approve: 2", "approve: -1", `line 15: approval policy "big-refunds": approve: -1 is less than 1`},
		{"approve fraction", "approve: 2", "approve: 1.5", `line 15: not a whole number`},
		{"bad pattern", `- "tools.call:issue_refund"`, `- "tool.call:issue_refund"`, `line 13: approval policy "big-refunds": match: capability pattern "tool.call:issue_refund" matches no capability`},
		{"empty match", "match:\n          - \"tools.call:issue_refund\"", "match: []", `line 11: approval policy "big-refunds": match: at least one`},
		{"duplicate policy", "- id: deploys", "- id: big-refunds", `line 16: duplicate approval policy id "big-refunds"`},
		{"unknown key", "approve: 2", "aprove: 2", `line 15: unknown field "aprove"`},
		{"unknown approvers key", "approvers: {group: finance}\n        approve: 2", "approvers: {grup: finance}\n        approve: 2", `line 14: unknown field "grup"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := strings.Replace(groupsYAML, tt.old, tt.new, 1)
			if y == groupsYAML {
				t.Fatalf("%q not in the file", tt.old)
			}
			_, err := Parse([]byte(y))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
