package config

import (
	"strings"
	"testing"
)

// emailBase is a tenant whose email key is the line after it (line 3).
const emailBase = "tenants:\n  - id: acme\n    email: "

const emailMembers = "\n    members: [{id: u-1, email: ada@example.com, policy: {allow: [\"*\"]}}]\n"

// Each bad email key is refused, naming its line; a good one loads, with
// starttls on unless it says false.
func TestEmailConfig(t *testing.T) {
	bad := []struct{ name, email, want string }{
		{"no port", `{smtp: mail.example.com, from: a@example.com}`, `line 3: email: smtp "mail.example.com" is not host:port`},
		{"port 0", `{smtp: "mail.example.com:0", from: a@example.com}`, "is not host:port"},
		{"no host", `{smtp: ":587", from: a@example.com}`, "is not host:port"},
		{"bad from", `{smtp: "mail.example.com:587", from: "not an address"}`, `line 3: email: from "not an address" is not an email address`},
		{"no from", `{smtp: "mail.example.com:587"}`, "is not an email address"},
		{"user without password", `{smtp: "mail.example.com:587", from: a@example.com, username_env: U}`, "line 3: email: username_env and password_env go together"},
		{"password without user", `{smtp: "mail.example.com:587", from: a@example.com, password_env: P}`, "go together"},
		{"clear credentials", `{smtp: "mail.example.com:25", from: a@example.com, username_env: U, password_env: P, starttls: false}`,
			"line 3: email: starttls: false would send the credentials in the clear to mail.example.com"},
		{"unknown key", `{smtp: "mail.example.com:587", from: a@example.com, tls: true}`, `unknown field "tls"`},
	}
	for _, c := range bad {
		if _, err := Parse([]byte(emailBase + c.email + emailMembers)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	good := []struct {
		email    string
		starttls bool
	}{
		{`{smtp: "mail.example.com:587", from: "Approvals <approvals@example.com>", username_env: U, password_env: P}`, true},
		{`{smtp: "127.0.0.1:25", from: approvals@example.com, username_env: U, password_env: P, starttls: false}`, false},
		{`{smtp: "mail.example.com:25", from: approvals@example.com, starttls: false}`, false},
	}
	for _, c := range good {
		cfg, err := Parse([]byte(emailBase + c.email + emailMembers))
		if err != nil {
			t.Errorf("%s: %v", c.email, err)
			continue
		}
		if got := cfg.Tenants[0].Email.UsesStartTLS(); got != c.starttls {
			t.Errorf("%s: starttls %v, want %v", c.email, got, c.starttls)
		}
	}
}
