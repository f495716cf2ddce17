package config

import (
	"strings"
	"testing"
)

const oidcBase = "public_url: https://cs.example.com\nlink_secret_env: LINKS\n"

// TestOIDCConfig: `oidc:` loads with its four keys, and every mistake in
// it is refused naming its line.
func TestOIDCConfig(t *testing.T) {
	tenant := "tenants:\n  - id: acme\n    members:\n      - {id: u-1, email: ada@example.com}\n"
	good := oidcBase + "oidc:\n  issuer: https://idp.example.com\n  client_id: countersign\n  client_secret_env: OIDC_SECRET\n" + tenant
	c, err := Parse([]byte(good))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.OIDC.Claim != "email" || c.OIDC.Issuer != "https://idp.example.com" {
		t.Errorf("oidc = %+v, want the issuer and claim email by default", c.OIDC)
	}
	if ts, _ := c.DomainTenants(); ts[0].Members["u-1"].Email != "ada@example.com" {
		t.Errorf("member email = %q", ts[0].Members["u-1"].Email)
	}
	tests := []struct{ name, yaml, want string }{
		{"unknown key", oidcBase + "oidc:\n  issuer: https://idp.example.com\n  client_id: c\n  client_secret_env: S\n  scopes: [x]\n" + tenant,
			`line 7: unknown field "scopes"`},
		{"http issuer", oidcBase + "oidc:\n  issuer: http://idp.example.com\n  client_id: c\n  client_secret_env: S\n" + tenant,
			`line 3: oidc: issuer "http://idp.example.com" must be an https URL`},
		{"no client id", oidcBase + "oidc:\n  issuer: https://idp.example.com\n  client_secret_env: S\n" + tenant,
			`line 3: oidc: client_id is required`},
		{"no secret", oidcBase + "oidc:\n  issuer: https://idp.example.com\n  client_id: c\n" + tenant,
			`line 3: oidc: client_secret_env is required`},
		{"bad claim", oidcBase + "oidc:\n  issuer: https://idp.example.com\n  client_id: c\n  client_secret_env: S\n  claim: \"a b\"\n" + tenant,
			`line 3: oidc: claim "a b" is not a claim name`},
		{"no public_url", "oidc:\n  issuer: https://idp.example.com\n  client_id: c\n  client_secret_env: S\n" + tenant,
			`line 1: oidc: needs public_url`},
		{"email twice", "tenants:\n  - id: acme\n    members:\n      - {id: u-1, email: ada@example.com}\n      - {id: u-2, email: Ada@Example.com}\n",
			`line 5: member "u-2": email "Ada@Example.com" is also member "u-1"'s`},
		{"email with a space", "tenants:\n  - id: acme\n    members:\n      - {id: u-1, email: \"ada @example.com\"}\n",
			`line 4: member "u-1": email "ada @example.com" has spaces`},
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
