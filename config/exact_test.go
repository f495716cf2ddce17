package config

import (
	"strings"
	"testing"
)

// TestKeysMatchExactly: a key matches a setting only byte-for-byte (SPEC
// §5, §10): "Tenants", "READ_RULES", "ſecret_env" (U+017F) and
// "slacK_user_id" (a Kelvin sign, U+212A) are unknown keys, refused
// naming the line, never taken for the setting.
func TestKeysMatchExactly(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"Tenants", "Tenants:\n  - id: acme\n", `line 1: unknown field "Tenants"`},
		{"READ_RULES", "tenants:\n  - id: acme\n    READ_RULES: [\"tools.call:read_*\"]\n", `line 3: unknown field "READ_RULES"`},
		{"Read_Rules beside read_rules", "tenants:\n  - id: acme\n    read_rules: []\n    Read_Rules: [\"*\"]\n", `line 4: unknown field "Read_Rules"`},
		{"Deny in a policy", "tenants:\n  - id: acme\n    members:\n      - id: u-1\n        policy: {allow: [\"*\"], Deny: [\"tools.call:*\"]}\n",
			`line 5: unknown field "Deny"`},
		{"long s", "tenants:\n  - id: acme\n    webhooks:\n      - {url: \"https://h.example/x\", ſecret_env: S}\n", `line 4: unknown field "ſecret_env"`},
		{"Kelvin sign", "tenants:\n  - id: acme\n    members:\n      - id: u-1\n        slac\u212a_user_id: U1\n", "line 5: unknown field \"slac\u212a_user_id\""},
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
