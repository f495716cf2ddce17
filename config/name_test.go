package config

import (
	"strings"
	"testing"
)

// A member's name (SPEC §10 "People by name") loads as written; one with a
// control or format character, spaces around it or over 128 characters is
// refused naming its line.
func TestMemberName(t *testing.T) {
	c, err := Parse([]byte("tenants:\n  - id: acme\n    members:\n      - {id: u-1, name: Ada Lovelace}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ts, _ := c.DomainTenants(); ts[0].Members["u-1"].Name != "Ada Lovelace" {
		t.Errorf("name = %q, want Ada Lovelace", ts[0].Members["u-1"].Name)
	}
	for what, name := range map[string]string{
		"bidi override": `"Ada\u202eLovelace"`, "newline": `"Ada\nLovelace"`, "space around": `" Ada"`,
		"too long": strings.Repeat("a", 129),
	} {
		_, err := Parse([]byte("tenants:\n  - id: acme\n    members:\n      - {id: u-1, name: " + name + "}\n"))
		if err == nil || !strings.Contains(err.Error(), `line 4: member "u-1"`) {
			t.Errorf("%s: %v, want refused at line 4 naming u-1", what, err)
		}
	}
}
