package app_test

import (
	"testing"

	"github.com/countersign/countersign/internal/servertest"
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
	globex.do(t, "GET", "/v1/agents/agt_a/rules", nil, nil, &rules)
	if len(rules.Items) != 0 {
		t.Fatalf("globex sees acme's rules: %+v", rules.Items)
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
	globex.do(t, "GET", "/v1/requests", nil, nil, &list)
	if len(list.Items) != 0 {
		t.Fatalf("globex inbox holds %d acme requests", len(list.Items))
	}
}
