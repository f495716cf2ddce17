package config

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
)

// TestNestedUnknownKeysAreRefused: a typo anywhere, nested keys of
// policies included, does not load (SPEC §10); a typo'd deny list would
// otherwise fail open.
func TestNestedUnknownKeysAreRefused(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"policy typo", "tenants:\n  - id: acme\n    members:\n      - id: u-1\n        policy:\n          allow: [\"*\"]\n          denny: [\"tools.call:*\"]\n",
			`line 7: unknown field "denny"`},
		{"flow policy typo", "tenants:\n  - id: acme\n    members:\n      - id: u-1\n        policy: {allow: [\"*\"], denny: [x]}\n",
			`line 5: unknown field "denny"`},
		{"member typo", "tenants:\n  - id: acme\n    members:\n      - id: u-1\n        polcy: {allow: [\"*\"]}\n",
			`line 5: unknown field "polcy"`},
		{"judge typo", "tenants:\n  - id: acme\n    judge:\n      base_url: http://x\n      model: m\n      timeuot: 3s\n",
			`line 6: unknown field "timeuot"`},
		{"token typo", "tenants:\n  - id: acme\n    members: [{id: u-1}]\n    tokens:\n      - {token: a, principal: \"person:u-1\", scope: [admin]}\n",
			`line 5: unknown field "scope"`},
		{"empty tenant", "tenants:\n  -\n", `line 2: empty list entry`},
		{"empty member", "tenants:\n  - id: acme\n    members: [~]\n", `line 3: empty list entry`},
		{"tenant typo", "tenants:\n  - id: acme\n    read_rule: [x]\n", `line 3: unknown field "read_rule"`},
		{"top-level typo", "listen: x\ntenantz: []\n", `line 2: unknown field "tenantz"`},
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

const twoTenants = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    tokens:
      - {%s, principal: "person:u-1", scopes: [approvals:read]}
  - id: other
    members: [{id: u-9, policy: {allow: ["*"]}}]
    tokens:
      - {token: other-only, principal: "person:u-9", scopes: [approvals:read]}
      - {%s, principal: "person:u-9", scopes: [admin]}
`

// TestTokenTwiceDoesNotLoad: a token, or its hash, that appears twice
// anywhere in the file does not load, and the error names the line; a
// plain token and its SHA-256 are the same token.
func TestTokenTwiceDoesNotLoad(t *testing.T) {
	sharedHash := "token_sha256: \"" + sha256HexOf("shared") + "\""
	tests := []struct{ name, first, second, want string }{
		{"plain in two tenants", "token: shared", "token: shared", "line 10: token appears twice in the file (first at line 5)"},
		{"hash in two tenants", sharedHash, sharedHash, "line 10: token appears twice"},
		{"plain and its hash", "token: shared", sharedHash, "line 10: token appears twice"},
		{"hash and its plain", sharedHash, "token: shared", "line 10: token appears twice"},
		{"twice in one tenant", "token: other-only", "token: fine", "line 9: token appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := strings.Replace(strings.Replace(twoTenants, "%s", tt.first, 1), "%s", tt.second, 1)
			_, err := Parse([]byte(y))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "shared") || strings.Contains(err.Error(), sha256HexOf("shared")) {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
	y := strings.Replace(strings.Replace(twoTenants, "%s", "token: one", 1), "%s", "token: two", 1)
	if _, err := Parse([]byte(y)); err != nil {
		t.Fatalf("distinct tokens: %v", err)
	}
}

func sha256HexOf(s string) string { return domain.HashToken(s) }
