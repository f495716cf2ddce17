package config

import (
	"strings"
	"testing"
	"time"
)

// backupTenant is a tenant whose members are the given lines (each a
// flow mapping under members:, on lines 4, 5, …).
func backupTenant(members ...string) string {
	y := "tenants:\n  - id: acme\n    members:\n"
	for _, m := range members {
		y += "      - " + m + "\n"
	}
	return y
}

// A member's backup and answer_within reach the domain tenant.
func TestBackupsLoad(t *testing.T) {
	c, err := Parse([]byte(backupTenant(
		`{id: u-1, backup: u-2, answer_within: 30m}`,
		`{id: u-2, backup: u-3, answer_within: 1h}`,
		`{id: u-3}`)))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := c.DomainTenants()
	if err != nil {
		t.Fatal(err)
	}
	m := ts[0].Members
	if m["u-1"].Backup != "u-2" || m["u-1"].AnswerWithin != 30*time.Minute || m["u-2"].Backup != "u-3" || m["u-2"].AnswerWithin != time.Hour {
		t.Errorf("u-1 = %+v, u-2 = %+v", m["u-1"], m["u-2"])
	}
	if m["u-3"].Backup != "" || m["u-3"].AnswerWithin != 0 {
		t.Errorf("u-3 has no backup: %+v", m["u-3"])
	}
}

// A backup that is not a member, a cycle of backups (a member their own
// backup too), an answer_within that is not a positive duration, and
// either half without the other are refused at load, naming the line.
func TestBackupsRefusedNamingTheLine(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"not a member", backupTenant(`{id: u-1, backup: u-9, answer_within: 30m}`),
			`line 4: member "u-1": backup "u-9" is not a member of tenant "acme"`},
		{"self", backupTenant(`{id: u-1, backup: u-1, answer_within: 30m}`),
			`line 4: member "u-1": backup cycle: u-1 → u-1`},
		{"cycle of two", backupTenant(`{id: u-1, backup: u-2, answer_within: 30m}`, `{id: u-2, backup: u-1, answer_within: 30m}`),
			`line 4: member "u-1": backup cycle: u-1 → u-2 → u-1`},
		{"cycle further on", backupTenant(`{id: u-0}`, `{id: u-1, backup: u-2, answer_within: 1m}`, `{id: u-2, backup: u-3, answer_within: 1m}`, `{id: u-3, backup: u-2, answer_within: 1m}`),
			`line 5: member "u-1": backup cycle: u-1 → u-2 → u-3 → u-2`},
		{"zero", backupTenant(`{id: u-1, backup: u-2, answer_within: 0s}`, `{id: u-2}`),
			`line 4: answer_within: not a positive Go duration: "0s"`},
		{"negative", backupTenant(`{id: u-1, backup: u-2, answer_within: -5m}`, `{id: u-2}`),
			`line 4: answer_within: not a positive Go duration: "-5m"`},
		{"unparsable", backupTenant(`{id: u-1, backup: u-2, answer_within: soon}`, `{id: u-2}`),
			`line 4: answer_within: not a positive Go duration: "soon"`},
		{"answer_within alone", backupTenant(`{id: u-1, answer_within: 30m}`),
			`line 4: member "u-1": answer_within needs a backup`},
		{"backup alone", backupTenant(`{id: u-1, backup: u-2}`, `{id: u-2}`),
			`line 4: member "u-1": backup "u-2" needs answer_within`},
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
