package rpc_test

import (
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// Finance answers refunds, two of them (SPEC §12); u-1 is the agent's
// member and not in finance.
const quorumYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
    groups:
      - {id: finance, members: [u-2, u-3]}
    approval_policies:
      - {id: refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, approve: 2}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write]}
      - {token: tok-u1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: tok-u3, principal: "person:u-3", scopes: [approvals:read, approvals:write]}
`

// TestQuorumChoicesAndCount: each member of the group is offered the
// request with its quorum; after one allows, they are offered nothing and
// the other sees "1 of 2" with the choices still theirs; the second allow
// resolves it for both.
func TestQuorumChoicesAndCount(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, servertest.WithConfig(quorumYAML))
	u2, u3 := dial(t, s.URL, "tok-u2"), dial(t, s.URL, "tok-u3")
	u2.subscribe(map[string]any{"inbox": true})
	u3.subscribe(map[string]any{"inbox": true})
	id := submit(t, s, "tok-main", map[string]any{"tool": "issue_refund", "session": "ses-1"})["id"].(string)
	n2, n3 := u2.expect("approval/requested", id), u3.expect("approval/requested", id)
	for _, n := range []msg{n2, n3} {
		if got := choiceIDs(n); got != "allow_once,allow_session,allow_always,deny,deny_with_reason" {
			t.Fatalf("a member's choices: %s", got)
		}
		if n.Params["requiredApprovals"] != 2.0 || len(n.Params["approvals"].([]any)) != 0 {
			t.Fatalf("count: %v of %v", n.Params["approvals"], n.Params["requiredApprovals"])
		}
	}
	if d := u2.decide(n2, "allow_once"); d.Error != nil || d.Result["status"] != "pending" {
		t.Fatalf("first allow: %s", d.raw)
	}
	if u := u2.expect("approval/updated", id); choiceIDs(u) != "" {
		t.Errorf("after allowing, u-2 is offered %s", choiceIDs(u))
	}
	u := u3.expect("approval/updated", id)
	if choiceIDs(u) == "" || len(u.Params["approvals"].([]any)) != 1 || u.Params["requiredApprovals"] != 2.0 {
		t.Fatalf("u-3 after one allow: choices %q, %s", choiceIDs(u), u.raw)
	}
	if d := u3.decide(u, "allow_once"); d.Error != nil || d.Result["status"] != "approved" {
		t.Fatalf("second allow: %s", d.raw)
	}
	u2.expect("approval/resolved", id)
	u3.expect("approval/resolved", id)
	if got := record(t, s, "tok-u1", id); got["status"] != "approved" || len(got["approvals"].([]any)) != 2 {
		t.Fatalf("record: %v", got)
	}
}
