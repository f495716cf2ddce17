package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// What the deciders derived from the config is derived again on reload:
// a request already waiting on u-1 moves to the backup a reload gave u-1,
// after the answer_within the reload set (its timer was armed without
// one).
func TestReloadRearmsWaitingRequests(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	without := strings.Replace(backupYAML("", ""), ", backup: u-2, answer_within: 10m", "", 1)
	srv, path := startLive(t, without, servertest.WithClock(clock))
	var r record
	if code := newClient(srv.URL, "dev-main").do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 || r.Approver == nil || r.Approver.ID != "u-1" {
		t.Fatalf("submit: %d %+v", code, r)
	}
	writeConfig(t, path, backupYAML("", ""))
	if err := reload(t, srv.App); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Now().Add(10*time.Minute + time.Second))
	testutil.Eventually(t, 10*time.Second, func() bool { return getMoved(t, srv.URL, r.ID).waitsOn("u-2") },
		"the request moved to the backup the reload gave u-1")
}

// A reload that shortens a tenant's request_retention has a terminal
// request removed after the new one, not the retention it ended under.
func TestReloadShortensRetention(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	yaml := func(retention string) string {
		return `tenants:
  - id: demo
    request_retention: ` + retention + `
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_main, member: u-1}]
    tokens:
      - {token: dev-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: dev-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read]}
`
	}
	srv, path := startLive(t, yaml("24h"), servertest.WithClock(clock))
	main, person := newClient(srv.URL, "dev-main"), newClient(srv.URL, "dev-person")
	var r record
	main.do(t, "POST", "/v1/requests", map[string]any{"tool": "deploy", "arguments": map[string]any{}, "timeout": "3h"}, nil, &r)
	if code := person.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "deny"}, nil, nil); code != 200 {
		t.Fatalf("deny: %d", code)
	}
	writeConfig(t, path, yaml("1h"))
	if err := reload(t, srv.App); err != nil {
		t.Fatal(err)
	}
	clock.Advance(61 * time.Minute)
	testutil.Eventually(t, 10*time.Second, func() bool { return main.do(t, "GET", "/v1/requests/"+r.ID, nil, nil, nil) == 404 },
		"the denied request removed after the retention the reload set")
}
