package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals/replay"
	"github.com/countersign/countersign/events"
)

// replayFixture runs acme with a week of requests decided every way: by
// read, by policy, by a grant left by a lifetime allow, and left waiting
// on u-1 and u-2. It returns the admin's client once the log holds them.
func replayFixture(t *testing.T) (admin *client, n int) {
	t.Helper()
	url := startAcme(t)
	admin, main, other, person := newClient(t, url, tokAdmin), newClient(t, url, tokMain), newClient(t, url, tokOther), newClient(t, url, tokPerson)
	call := func(c *client, tool string) map[string]any {
		return c.submit(map[string]any{"tool": tool, "arguments": map[string]any{"n": 1}})
	}
	call(main, "read_file")
	call(main, "drop_table")
	first := main.pending()
	person.answer(first, "allow", "lifetime").want(t, "allow for good", http.StatusOK)
	if got := str(call(main, "deploy")["status"]); got != "approved" {
		t.Fatalf("the second deploy is %s; want approved by the grant", got)
	}
	call(main, "lookup_order")
	call(main, "lookup_order")
	call(other, "lookup_order")
	n = 7
	// The grant's entry too: the log's writer takes the grants and the
	// requests from two streams, so the grant can land after the requests
	// made after it, and a replay reads only what the log holds.
	eventually(t, 20*time.Second, "the requests' created entries and the grant's in the log", func() bool {
		log, _ := exportAudit(t, admin, "")
		return bytes.Count(log, []byte(`"revision":0,`)) == n && bytes.Contains(log, []byte(`"type":"`+events.TypeGrantCreated+`"`))
	})
	return admin, n
}

func replayOf(t *testing.T, admin *client, yaml string) replay.Report {
	t.Helper()
	r := admin.do("POST", "/v1/policy/replay", map[string]any{"config": yaml, "since": "168h"}).want(t, "replay", http.StatusOK)
	var rep replay.Report
	if err := json.Unmarshal(r.raw, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, r.raw)
	}
	return rep
}

// Replaying the running config changes nothing it reports, and counts each
// request where its check order put it; a candidate that adds a read rule
// lists exactly the requests the rule decides, and the replay writes
// nothing, to the state or to the log.
func TestPolicyReplay(t *testing.T) {
	admin, n := replayFixture(t)
	beforeLog, _ := exportAudit(t, admin, "")
	_, _, beforeList := admin.list("?limit=100")
	beforeGrants := admin.do("GET", "/v1/grants", nil).want(t, "grants", http.StatusOK).raw

	rep := replayOf(t, admin, acmeYAML)
	if rep.Requests != n || len(rep.Changes) != 0 {
		t.Fatalf("the running config: %d requests, changes %+v; want %d and none", rep.Requests, rep.Changes, n)
	}
	want := map[string][2]int{ // capability: {decided by grant, waiting on a decider}
		"tools.call:deploy":       {1, 1},
		"tools.call:lookup_order": {0, 3},
	}
	for _, l := range rep.Summary {
		if w, ok := want[l.Capability]; ok && (l.Grant != w[0] || l.Decider != w[1]) {
			t.Errorf("%s: grant %d, decider %d; want %d, %d", l.Capability, l.Grant, l.Decider, w[0], w[1])
		}
	}

	candidate := strings.Replace(acmeYAML, `read_rules: ["tools.call:read_*"`, `read_rules: ["tools.call:lookup_*", "tools.call:read_*"`, 1)
	rep = replayOf(t, admin, candidate)
	if len(rep.Changes) != 3 {
		t.Fatalf("a read rule for lookup_*: changes %+v; want the three lookups", rep.Changes)
	}
	for _, c := range rep.Changes {
		if c.Capability != "tools.call:lookup_order" || c.Old.By != replay.ByDecider || c.New.By != replay.ByRead || c.New.ID != "tools.call:lookup_*" {
			t.Errorf("change %+v; want a lookup that waited, now read by tools.call:lookup_*", c)
		}
	}

	afterLog, _ := exportAudit(t, admin, "")
	_, _, afterList := admin.list("?limit=100")
	afterGrants := admin.do("GET", "/v1/grants", nil).want(t, "grants", http.StatusOK).raw
	if !bytes.Equal(beforeLog, afterLog) || !bytes.Equal(beforeList.raw, afterList.raw) || !bytes.Equal(beforeGrants, afterGrants) {
		t.Errorf("a replay changed the log, the requests or the grants")
	}
}

// Routing at the top: two of a finance group for deploy moves the deploy
// that waited on u-1 and leaves the one its grant decided.
func TestPolicyReplayRouting(t *testing.T) {
	admin, _ := replayFixture(t)
	candidate := strings.Replace(acmeYAML, "    members:\n      - id: u-1\n", `    groups:
      - {id: finance, members: [u-1, u-2]}
    approval_policies:
      - {id: deploys, match: ["tools.call:deploy"], approvers: {group: finance}, approve: 2}
    members:
      - id: u-1
`, 1)
	rep := replayOf(t, admin, candidate)
	if len(rep.Changes) != 1 {
		t.Fatalf("changes %+v; want the first deploy alone", rep.Changes)
	}
	c := rep.Changes[0]
	if c.Old.Approver == nil || c.Old.Approver.ID != "u-1" || c.New.Approver == nil || c.New.Approver.ID != "finance" || c.New.RequiredApprovals != 2 {
		t.Errorf("change %+v; want u-1 → group finance ×2", c)
	}
	if !strings.Contains(c.Reason, "deploys") {
		t.Errorf("reason %q does not name the approval policy", c.Reason)
	}
}

// Bad input gets a clear problem and replays nothing.
func TestPolicyReplayRefusals(t *testing.T) {
	url := startAcme(t)
	admin := newClient(t, url, tokAdmin)
	for _, tc := range []struct {
		name, field string
		body        any
	}{
		{"bad YAML", "config", map[string]any{"config": "tenants: [", "since": "1h"}},
		{"invalid config", "config", map[string]any{"config": "tenants: []\n"}},
		{"no such tenant", "config", map[string]any{"config": strings.Replace(acmeYAML, "id: acme", "id: initech", 1)}},
		{"no config", "config", map[string]any{"since": "1h"}},
		{"bad since", "since", map[string]any{"config": acmeYAML, "since": "a week"}},
		{"negative since", "since", map[string]any{"config": acmeYAML, "since": "-1h"}},
		{"unknown field", "colour", map[string]any{"config": acmeYAML, "colour": "red"}},
		{"another tenant", "tenant", map[string]any{"config": acmeYAML, "tenant": "globex"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			admin.do("POST", "/v1/policy/replay", tc.body).wantProblem(t, tc.name, http.StatusBadRequest, "InvalidRequest", tc.field)
		})
	}
	newClient(t, url, tokPerson).do("POST", "/v1/policy/replay", map[string]any{"config": acmeYAML}).want(t, "a person", http.StatusForbidden)
}
