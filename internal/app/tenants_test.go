package app_test

import (
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

const twoTenants = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}]
    tokens: [{token: acme-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]},
             {token: acme-agent, principal: "agent:agt_a", scopes: [requests:write]}]
  - id: globex
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}]
    tokens: [{token: globex-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}]
`

// Nothing crosses tenants: not rules kept for an agent id both use, not
// requests, not grants.
func TestTenantsShareNothing(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(twoTenants))
	acme, globex := newClient(srv.URL, "acme-person"), newClient(srv.URL, "globex-person")
	if code := acme.do(t, "POST", "/v1/agents/agt_a/rules", map[string]any{"text": "Acme's rule."}, nil, nil); code != 201 {
		t.Fatalf("add rule: %d", code)
	}
	var rules struct{ Items []struct{ Text string } }
	if code := acme.do(t, "GET", "/v1/agents/agt_a/rules", nil, nil, &rules); code != 200 || !hasRule(rules.Items, "Acme's rule.") {
		t.Fatalf("acme reading its own rules: %d %+v", code, rules.Items)
	}
	rules.Items = nil
	if code := globex.do(t, "GET", "/v1/agents/agt_a/rules", nil, nil, &rules); code != 200 || hasRule(rules.Items, "Acme's rule.") {
		t.Fatalf("globex reading agt_a's rules: %d %+v, want 200 without acme's rule", code, rules.Items)
	}
	var r record
	newClient(srv.URL, "acme-agent").do(t, "POST", "/v1/requests", refund(1), nil, &r)
	if code := globex.do(t, "GET", "/v1/requests/"+r.ID, nil, nil, nil); code != 404 {
		t.Fatalf("globex reading acme's request: %d, want 404", code)
	}
	if code := globex.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow"}, nil, nil); code != 404 {
		t.Fatalf("globex answering acme's request: %d, want 404", code)
	}
	var list struct{ Items []record }
	if code := globex.do(t, "GET", "/v1/requests", nil, nil, &list); code != 200 || len(list.Items) != 0 {
		t.Fatalf("globex inbox: %d with %d acme requests", code, len(list.Items))
	}
	// acme's grant: acme sees it, globex neither lists nor revokes it.
	if code := acme.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow", "scope": "lifetime"}, nil, nil); code != 200 {
		t.Fatalf("acme allows for lifetime: %d", code)
	}
	var grants struct{ Items []struct{ ID string } }
	if code := acme.do(t, "GET", "/v1/grants", nil, nil, &grants); code != 200 || len(grants.Items) != 1 {
		t.Fatalf("acme's grants: %d %+v, want one", code, grants.Items)
	}
	id := grants.Items[0].ID
	grants.Items = nil
	if code := globex.do(t, "GET", "/v1/grants", nil, nil, &grants); code != 200 || len(grants.Items) != 0 {
		t.Fatalf("globex's grants: %d %+v, want none", code, grants.Items)
	}
	if code := globex.do(t, "DELETE", "/v1/grants/"+id, nil, nil, nil); code != 404 {
		t.Fatalf("globex revoking acme's grant: %d, want 404", code)
	}
}

func hasRule(items []struct{ Text string }, text string) bool {
	for _, it := range items {
		if it.Text == text {
			return true
		}
	}
	return false
}
