package config

import "testing"

// FuzzParse: loading a config never panics, every error names a line, and
// a config that loads converts to its tenants.
func FuzzParse(f *testing.F) {
	seeds := []string{
		DemoYAML, base, base + "      - {id: b, member: u-1, parent: b}\n",
		"tenants:\n  - id: acme\n    members:\n      - id: u-1\n        policy: {allow: [\"*\"], denny: [x]}\n",
		"tenants:\n  - id: a\n    members: [{id: u}]\n    tokens: [{token: t, principal: \"person:u\"}]\n  - id: b\n    members: [{id: v}]\n    tokens: [{token: t, principal: \"person:v\"}]\n",
		"tenants:\n  - id: a\n    members: [{id: u}]\n    tokens: [{token_sha256: \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\", principal: \"person:u\"}, {token: \"\", principal: \"person:u\"}]\n",
		"tenants:\n  - id: a\n    judge: {base_url: x, model: m, timeout: -1s}\n", "roles: [web]\ntenants: [{id: a}]\n",
		"tenants:\n  - id: a\n    read_rules: [\"*\", \"tools.call:*\", \"tools.call:Bash\", \"agents.spawn:*\"]\n",
		"tenants:\n  - id: a\n    members:\n      - id: u\n        policy:\n          deny:\n            - \"delete_*\"\n            - \" tools.call:rm\"\n            - \"\"\n",
		"replicas: 0\ntenants: [{id: a}]\n", "replicas: 6\ntenants: [{id: a}]\n",
		"", "---\n", "tenants: &a [*a]\n", "tenants:\n  - id: a\n    <<: {id: b}\n", "\t", "tenants: {id: a}\n", "tenants:\n  - id: a\n    id: b\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			if !namesALine.MatchString(err.Error()) {
				t.Fatalf("Parse(%q) error %q names no line", b, err)
			}
			return
		}
		if _, err := c.DomainTenants(); err != nil {
			t.Fatalf("Parse(%q) loaded, but its tenants do not convert: %v", b, err)
		}
	})
}
