package app_test

import (
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// Time rules on one stepped clock, without sleeping through them: a
// deadline expires a request, an approval TTL ends a claim, a review
// timeout passes a request up.
func TestTimeRulesOnASteppedClock(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	srv := servertest.Start(t, servertest.WithClock(clock))
	main, prog, person := newClient(srv.URL, "dev-main"), newClient(srv.URL, "dev-programmer"), newClient(srv.URL, "dev-person")
	get := func(c *client, id string) record {
		var r record
		c.do(t, "GET", "/v1/requests/"+id, nil, nil, &r)
		return r
	}

	var waiting, approved, reviewed record
	main.do(t, "POST", "/v1/requests", refund(1), nil, &waiting)  // 1h timeout, waits on the person
	main.do(t, "POST", "/v1/requests", refund(2), nil, &approved) // the person approves it
	prog.do(t, "POST", "/v1/requests", refund(3), nil, &reviewed) // waits on agt_main, whose review times out after 2m
	if code := person.do(t, "POST", "/v1/requests/"+approved.ID, map[string]any{"expected": 0, "decision": "allow"}, nil, &approved); code != 200 {
		t.Fatalf("approve: %d", code)
	}

	// A review's time runs from its record's write, stamped by the NATS
	// server's (wall) clock, which has moved on while the server started:
	// step past 2m from now, not from the clock's start.
	clock.Set(time.Now().Add(2*time.Minute + time.Second))
	testutil.Eventually(t, 10*time.Second, func() bool {
		r := get(person, reviewed.ID)
		return r.Approver != nil && r.Approver.Kind == "person"
	}, "agt_main's review timed out and the request went up to the person")
	if r := get(main, waiting.ID); r.Status != "pending" {
		t.Fatalf("before its deadline: %s", r.Status)
	}

	clock.Advance(3 * time.Minute) // past approval_ttl (5m)
	if code := main.do(t, "POST", "/v1/requests/"+approved.ID+"/claim", map[string]any{"call_digest": approved.CallDigest}, nil, nil); code != 409 {
		t.Errorf("claim past decision.expires_at: %d, want 409", code)
	}

	clock.Advance(time.Hour) // past the 1h deadline
	testutil.Eventually(t, 10*time.Second, func() bool {
		r := get(main, waiting.ID)
		return r.Status == "expired" && r.Decision != nil && r.Decision.By.Kind == "deadline"
	}, "the request expired at its deadline")
}

// retentionServer is a server on a stepped clock whose tenant keeps its
// records an hour, with its agent's and its person's clients.
func retentionServer(t *testing.T) (srv *servertest.Server, clock *testutil.Clock, main, person *client) {
	t.Helper()
	clock = testutil.NewClock(time.Now())
	srv = servertest.Start(t, servertest.WithClock(clock), servertest.WithConfig(`tenants:
  - id: demo
    request_retention: 1h
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_main, member: u-1}]
    tokens:
      - {token: dev-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: dev-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read]}
`))
	return srv, clock, newClient(srv.URL, "dev-main"), newClient(srv.URL, "dev-person")
}

// A terminal record is removed request_retention after it ended: the
// sweeper removes it, and a GET of it is then 404; a pending one stays.
func TestRetentionRemovesTerminalRecords(t *testing.T) {
	_, clock, main, person := retentionServer(t)
	var denied, pending record
	main.do(t, "POST", "/v1/requests", map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}, "timeout": "3h"}, nil, &denied)
	main.do(t, "POST", "/v1/requests", map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 2}, "timeout": "3h"}, nil, &pending)
	if code := person.do(t, "POST", "/v1/requests/"+denied.ID, map[string]any{"expected": 0, "decision": "deny"}, nil, nil); code != 200 {
		t.Fatalf("deny: %d", code)
	}
	clock.Advance(59 * time.Minute)
	if code := main.do(t, "GET", "/v1/requests/"+denied.ID, nil, nil, nil); code != 200 {
		t.Fatalf("before its retention: %d", code)
	}
	clock.Advance(2 * time.Minute)
	testutil.Eventually(t, 10*time.Second, func() bool {
		return main.do(t, "GET", "/v1/requests/"+denied.ID, nil, nil, nil) == 404
	}, "the denied request removed after its retention")
	if code := main.do(t, "GET", "/v1/requests/"+pending.ID, nil, nil, nil); code != 200 {
		t.Errorf("the pending request: %d, want 200", code)
	}
}

// A revoked grant is removed request_retention after its revocation; a
// grant in force is kept.
func TestRetentionRemovesRevokedGrants(t *testing.T) {
	_, clock, main, person := retentionServer(t)
	grant := func(tool string) string {
		t.Helper()
		var r record
		main.do(t, "POST", "/v1/requests", map[string]any{"tool": tool, "arguments": map[string]any{}, "timeout": "3h"}, nil, &r)
		if code := person.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow", "scope": "lifetime"}, nil, nil); code != 200 {
			t.Fatalf("allow: %d", code)
		}
		var page struct {
			Items []struct {
				ID        string `json:"id"`
				RequestID string `json:"request_id"`
			} `json:"items"`
		}
		person.do(t, "GET", "/v1/grants", nil, nil, &page)
		for _, g := range page.Items {
			if g.RequestID == r.ID {
				return g.ID
			}
		}
		t.Fatalf("no grant for %s in %+v", tool, page.Items)
		return ""
	}
	revoked, kept := grant("deploy"), grant("build")
	if code := person.do(t, "DELETE", "/v1/grants/"+revoked, nil, nil, nil); code != 200 {
		t.Fatalf("revoke: %d", code)
	}
	listed := func(id string) bool {
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		person.do(t, "GET", "/v1/grants?revoked=true", nil, nil, &page)
		for _, g := range page.Items {
			if g.ID == id {
				return true
			}
		}
		return false
	}
	clock.Advance(59 * time.Minute)
	if !listed(revoked) {
		t.Fatal("the revoked grant is gone before its retention")
	}
	clock.Advance(2 * time.Minute)
	testutil.Eventually(t, 10*time.Second, func() bool { return !listed(revoked) }, "the revoked grant removed after its retention")
	if !listed(kept) {
		t.Error("the grant in force was removed")
	}
}

// A restart starts from the request mirror's snapshot, saved at shutdown,
// and the process behaves as after a replay: both requests are listed (the
// terminal one read from KV), the pending one still expires at its
// deadline (its timer is armed from the snapshot's load), and the terminal
// one is still removed after its retention.
func TestRestartFromTheSnapshot(t *testing.T) {
	srv, clock, main, person := retentionServer(t)
	var denied, pending record
	main.do(t, "POST", "/v1/requests", map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}, "timeout": "3h"}, nil, &denied)
	main.do(t, "POST", "/v1/requests", map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 2}, "timeout": "3h"}, nil, &pending)
	if code := person.do(t, "POST", "/v1/requests/"+denied.ID, map[string]any{"expected": 0, "decision": "deny"}, nil, nil); code != 200 {
		t.Fatalf("deny: %d", code)
	}
	srv.Restart(t)
	if srv.App.Service.Views().Snapshots().Resumed() == 0 {
		t.Fatal("the restart replayed instead of loading the snapshot")
	}
	main, person = newClient(srv.URL, "dev-main"), newClient(srv.URL, "dev-person")
	var page struct {
		Items []record `json:"items"`
	}
	if code := person.do(t, "GET", "/v1/requests", nil, nil, &page); code != 200 || len(page.Items) != 2 ||
		page.Items[0].ID != denied.ID || page.Items[0].Status != "denied" || page.Items[1].Status != "pending" {
		t.Fatalf("the inbox after the restart: %d %+v", code, page.Items)
	}
	clock.Advance(3*time.Hour + time.Minute)
	testutil.Eventually(t, 10*time.Second, func() bool {
		var r record
		main.do(t, "GET", "/v1/requests/"+pending.ID, nil, nil, &r)
		return r.Status == "expired" && r.Decision != nil && r.Decision.By.Kind == "deadline"
	}, "the pending request expired at its deadline")
	testutil.Eventually(t, 10*time.Second, func() bool {
		return main.do(t, "GET", "/v1/requests/"+denied.ID, nil, nil, nil) == 404
	}, "the denied request removed after its retention")
}
