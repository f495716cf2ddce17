package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

// specExample is the YAML example of docs/SPEC.md §10 "Flags and
// configuration", with its elided token hash written out in full (the
// SHA-256 of "test"; a truncated hash must not load).
func specExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "### Flags and configuration")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	y, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the SPEC has no YAML example under Flags and configuration")
	}
	return strings.Replace(y, `"9f86d0…"`, `"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`, 1)
}

func TestSpecSection10ExampleLoads(t *testing.T) {
	for _, v := range []string{"COUNTERSIGN_LINK_SECRET", "SLACK_SIGNING_SECRET", "CS_HOOK_SECRET", "JUDGE_API_KEY"} {
		t.Setenv(v, "secret-"+v)
	}
	c, err := Parse([]byte(specExample(t)))
	if err != nil {
		t.Fatal(err)
	}
	tc := c.Tenants[0]
	if c.PublicURL != "https://approvals.example.com" || c.LinkSecretEnv != "COUNTERSIGN_LINK_SECRET" {
		t.Errorf("public_url, link_secret_env = %q, %q", c.PublicURL, c.LinkSecretEnv)
	}
	if tc.SlackSigningSecretEnv != "SLACK_SIGNING_SECRET" || tc.Members[0].SlackUserID != "U024BE7LH" || tc.RequestRetention != "720h" {
		t.Errorf("tenant = %+v, member = %+v", tc, tc.Members[0])
	}
	if ts, _ := c.DomainTenants(); ts[0].RequestRetention != 720*time.Hour {
		t.Errorf("request_retention = %v, want 720h", ts[0].RequestRetention)
	}
	w := tc.Webhooks
	if len(w) != 1 || w[0].URL != "https://hooks.example.com/cs" || w[0].SecretEnv != "CS_HOOK_SECRET" ||
		strings.Join(w[0].Events, ",") != "request.created,request.escalated" || w[0].Format != "cloudevents" {
		t.Errorf("webhooks = %+v", w[0])
	}
}

func TestNotifyKeysRefused(t *testing.T) {
	tenant := func(extra string) string {
		return "tenants:\n  - id: acme\n" + extra + "    members:\n      - {id: u-1, slack_user_id: U1}\n      - {id: u-2, slack_user_id: U2}\n"
	}
	for name, y := range map[string]string{
		"unknown webhook key":  tenant("    webhooks:\n      - {url: \"https://h.example/x\", secret_env: S, colour: red}\n"),
		"relative url":         tenant("    webhooks:\n      - {url: \"/x\", secret_env: S}\n"),
		"unknown format":       tenant("    webhooks:\n      - {url: \"https://h.example/x\", secret_env: S, format: teams}\n"),
		"unknown event":        tenant("    webhooks:\n      - {url: \"https://h.example/x\", secret_env: S, events: [request.made]}\n"),
		"unsigned cloudevents": tenant("    webhooks:\n      - {url: \"https://h.example/x\"}\n"),
		"bad retention":        tenant("    request_retention: forever\n"),
		"public_url no secret": "public_url: https://a.example\n" + tenant(""),
		"public_url relative":  "public_url: /approvals\nlink_secret_env: K\n" + tenant(""),
		"same slack user":      "tenants:\n  - id: acme\n    members:\n      - {id: u-1, slack_user_id: U1}\n      - {id: u-2, slack_user_id: U1}\n",
	} {
		if _, err := Parse([]byte(y)); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: err = %v, want an error naming the line", name, err)
		}
	}
	ok := tenant("    webhooks:\n      - {url: \"https://hooks.slack.com/services/T/B/X\", format: slack}\n")
	if _, err := Parse([]byte(ok)); err != nil {
		t.Errorf("an unsigned slack webhook must load: %v", err)
	}
}
