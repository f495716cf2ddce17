package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// policyOrderYAML: two approval policies match tools.call:issue_refund,
// the narrow one first.
const policyOrderYAML = `tenants:
  - id: acme
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
    groups:
      - {id: finance, members: [u-1, u-2]}
      - {id: ops, members: [u-3]}
    approval_policies:
      - {id: refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, approve: 2}
      - {id: everything, match: ["*"], approvers: {group: ops}}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: po-main, principal: "agent:agt_main", scopes: [requests:write]}
      - {token: po-u3, principal: "person:u-3", scopes: [approvals:read, approvals:write]}
`

// TestApprovalPoliciesFirstMatchWins (SPEC §12: "first match, in file
// order"): a refund, which both policies match, waits on the first's group
// and quorum; any other call on the second's; the second's group neither
// sees nor answers the refund.
func TestApprovalPoliciesFirstMatchWins(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, servertest.WithConfig(policyOrderYAML))
	agent, u3 := newClient(t, srv.URL, "po-main"), newClient(t, srv.URL, "po-u3")
	for _, tc := range []struct {
		tool, approver string
		quorum         int
	}{
		{"issue_refund", `{"id":"finance","kind":"group"}`, 2},
		{"deploy", `{"id":"ops","kind":"group"}`, 1},
	} {
		rec := agent.pending("tool", tc.tool)
		if got := jsonString(rec["approver"]); got != tc.approver {
			t.Errorf("%s: approver %s, want %s", tc.tool, got, tc.approver)
		}
		if got := num(rec["required_approvals"]); got != tc.quorum {
			t.Errorf("%s: required_approvals %d, want %d", tc.tool, got, tc.quorum)
		}
		if tc.tool == "issue_refund" {
			u3.answer(rec, "allow", "once").wantProblem(t, "ops answers the refund", http.StatusNotFound, "RequestNotFound", "")
		}
	}
}
