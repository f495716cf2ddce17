package deciders_test

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// DelegationBar bars an agent delegating to itself, to an agent above it
// in its chain, to an agent of another member and to an agent the views do
// not hold; it lets an agent delegate to another of its member's agents.
// The members are the config's (tenantYAML): main and prog work for u-1,
// lone for u-2.
func TestDelegationBar(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name             string
		tenant           domain.TenantID // "" is acme
		delegator, agent domain.AgentID
		chain            []domain.AgentID
		bar              string // a part of the reason; "" when not barred
	}{
		{"to an agent of the same member", "", "main", "prog", []domain.AgentID{"main"}, ""},
		{"down a chain to the same member", "", "prog", "main", []domain.AgentID{"prog"}, ""},
		{"to itself", "", "main", "main", []domain.AgentID{"main"}, "cannot delegate work to itself"},
		{"to itself with no chain", "", "prog", "prog", nil, "cannot delegate work to itself"},
		{"to an agent above it in its chain", "", "prog", "main", []domain.AgentID{"main", "", "prog"}, "main is above prog in its chain"},
		{"to an agent of another member", "", "main", "lone", []domain.AgentID{"main"}, "lone works for another member than main"},
		{"from an agent of another member", "", "lone", "main", []domain.AgentID{"lone"}, "main works for another member than lone"},
		{"to an agent not known", "", "main", "ghost", []domain.AgentID{"main"}, "ghost works for another member than main"},
		{"from an agent not known", "", "ghost", "main", nil, "main works for another member than ghost"},
		{"of a tenant the views do not hold", "other", "main", "prog", nil, "prog works for another member than main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tenant, want := tc.tenant, tc.bar
			if tenant == "" {
				tenant = "acme"
			}
			got := deciders.DelegationBar(f.views, tenant, tc.delegator, tc.agent, tc.chain)
			switch {
			case want == "" && got != "":
				t.Errorf("barred: %q", got)
			case want != "" && !strings.Contains(got, want):
				t.Errorf("bar %q, want one saying %q", got, want)
			case want != "" && !strings.HasPrefix(got, "authority never crosses members: "):
				t.Errorf("bar %q does not name the rule", got)
			}
		})
	}
}
