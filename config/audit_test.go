package config

import (
	"strings"
	"testing"
	"time"
)

// audit_retention defaults to 400 days, may be set per tenant, and a bad
// one is refused naming its line (SPEC §14).
func TestAuditRetention(t *testing.T) {
	tenant := func(extra string) string {
		return "audit_signing_key_env: AUDIT_KEY\ntenants:\n  - id: acme\n" + extra + "    members: [{id: u-1}]\n"
	}
	for extra, want := range map[string]time.Duration{"": 400 * 24 * time.Hour, "    audit_retention: 24h\n": 24 * time.Hour} {
		cfg, err := Parse([]byte(tenant(extra)))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := cfg.DomainTenants()
		if err != nil || ts[0].AuditRetention != want || cfg.AuditSigningKeyEnv != "AUDIT_KEY" {
			t.Errorf("%q: got %v, %q, %v; want %v", extra, ts[0].AuditRetention, cfg.AuditSigningKeyEnv, err, want)
		}
	}
	for _, bad := range []string{"forever", "-1h", "0s"} {
		_, err := Parse([]byte(tenant("    audit_retention: " + bad + "\n")))
		if err == nil || !strings.Contains(err.Error(), "audit_retention") || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: err = %v; want audit_retention refused with its line", bad, err)
		}
	}
}
