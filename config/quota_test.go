package config

import (
	"strings"
	"testing"
)

// A tenant's quotas (SPEC §5) default when absent, are taken as given,
// and anything but a positive whole number is refused naming the line.
func TestTenantQuotas(t *testing.T) {
	ts, err := Demo().DomainTenants()
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]int{ts[0].MaxPending, ts[0].SubmitRate, ts[0].SubmitBurst}; got != [3]int{1000, 50, 100} {
		t.Errorf("defaults = %v, want [1000 50 100]", got)
	}
	c, err := Parse([]byte("tenants:\n  - id: t\n    max_pending: 3\n    submit_rate: 5\n    submit_burst: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ts, _ = c.DomainTenants(); [3]int{ts[0].MaxPending, ts[0].SubmitRate, ts[0].SubmitBurst} != [3]int{3, 5, 7} {
		t.Errorf("given = %+v, want 3 5 7", ts[0])
	}
	for yaml, want := range map[string]string{
		"max_pending: 0":     `line 2: max_pending: must be a positive whole number, not 0`,
		"submit_rate: -5":    `line 2: submit_rate: must be a positive whole number, not -5`,
		"submit_burst: 0":    `line 2: submit_burst: must be a positive whole number, not 0`,
		"submit_rate: 0.5":   `line 3: not a whole number: "0.5"`,
		"submit_rate: lots":  `line 3: not a whole number: "lots"`,
		"max_pendings: 1000": `line 3: unknown field "max_pendings"`,
	} {
		_, err := Parse([]byte("tenants:\n  - id: t\n    " + yaml + "\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", yaml, err, want)
		}
	}
}
