package rpc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// namesYAML is quorumYAML with people's names.
var namesYAML = strings.NewReplacer("{id: u-1, policy", "{id: u-1, name: Ada Lovelace, policy",
	"{id: u-2, policy", "{id: u-2, name: Grace Hopper, policy", "{id: u-3, policy", "{id: u-3, name: Edsger Dijkstra, policy").Replace(quorumYAML)

// who reads a principal object of the params.
func who(v any) (kind, id, name string) {
	m, _ := v.(map[string]any)
	kind, _ = m["kind"].(string)
	id, _ = m["id"].(string)
	name, _ = m["name"].(string)
	return
}

// TestDisplayFieldsNamePeople: the params name people by name beside
// their id (SPEC §10): the approver, each approval of a group's request,
// a shell stage's allowedBy and the decision's by; a group is named by
// its id alone.
func TestDisplayFieldsNamePeople(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, servertest.WithConfig(namesYAML))
	u1, u3 := dial(t, s.URL, "tok-u1"), dial(t, s.URL, "tok-u3")
	u1.subscribe(map[string]any{"inbox": true})
	u3.subscribe(map[string]any{"inbox": true})

	refund := submit(t, s, "tok-main", map[string]any{"tool": "issue_refund", "session": "ses-n"})["id"].(string)
	n := u3.expect("approval/requested", refund)
	if k, id, name := who(n.Params["approver"]); k != "group" || id != "finance" || name != "" {
		t.Errorf("approver %v", n.Params["approver"])
	}
	if code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+refund, "tok-u2", map[string]any{"expected": 0, "decision": "allow"}); code != http.StatusOK {
		t.Fatalf("u-2 allows: %d %s", code, data)
	}
	u := u3.expect("approval/updated", refund)
	if list, _ := u.Params["approvals"].([]any); len(list) != 1 {
		t.Fatalf("approvals %v", u.Params["approvals"])
	} else if k, id, name := who(list[0].(map[string]any)["by"]); k != "person" || id != "u-2" || name != "Grace Hopper" {
		t.Errorf("approvals[0].by %v", list[0])
	}
	if d := u3.decide(u, "allow_once"); d.Error != nil {
		t.Fatalf("u-3 allows: %s", d.raw)
	}
	r := u3.expect("approval/resolved", refund)
	if k, id, name := who(r.Params["decision"].(map[string]any)["by"]); k != "person" || id != "u-3" || name != "Edsger Dijkstra" {
		t.Errorf("decision.by %v", r.Params["decision"])
	}

	cmd := "ls -la && rm -rf /tmp/x"
	sh := submit(t, s, "tok-main", map[string]any{"tool": "Bash", "session": "ses-n", "arguments": map[string]any{"command": cmd},
		"subject": map[string]any{"kind": "shell", "command": cmd}})["id"].(string)
	first := u1.expect("approval/requested", sh)
	if k, id, name := who(first.Params["approver"]); k != "person" || id != "u-1" || name != "Ada Lovelace" {
		t.Errorf("approver %v", first.Params["approver"])
	}
	if d := u1.decide(first, "allow_once"); d.Error != nil {
		t.Fatalf("u-1 allows stage 0: %s", d.raw)
	}
	second := u1.expect("approval/requested", sh)
	stages := second.Params["subject"].(map[string]any)["stages"].([]any)
	if k, id, name := who(stages[0].(map[string]any)["allowedBy"]); k != "person" || id != "u-1" || name != "Ada Lovelace" {
		t.Errorf("stage 0 allowedBy %v", stages[0])
	}
}
