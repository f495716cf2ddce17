package app_test

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// The watched sessions are shared between processes: with two API
// processes, a protected write answered over HTTP on one is refused
// (409 protected_write_unwatched) until a /v1/rpc client subscribes to
// its session on the other, again once that client unsubscribes, and
// taken while it watches.
func TestProtectedWriteWatchedOnAnotherProcess(t *testing.T) {
	url := startExternalNATS(t)
	api1, api2 := startRole(t, url, "api"), startRole(t, url, "api")
	person2 := newClient("http://"+api2.Addr(), "dev-person")
	var r record
	body := map[string]any{"tool": "Write", "session": "ses-pw", "arguments": map[string]any{"file_path": ".git/config"},
		"subject": map[string]any{"kind": "tool", "protected_write": true}, "timeout": "1h"}
	if code := newClient("http://"+api1.Addr(), "dev-main").do(t, "POST", "/v1/requests", body, nil, &r); code != 201 {
		t.Fatalf("submit on api1: %d", code)
	}
	refused := func(what string) {
		t.Helper()
		var p struct{ Error, Reason string }
		if code := person2.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow"}, nil, &p); code != 409 ||
			p.Reason != "protected_write_unwatched" {
			t.Fatalf("%s: answer on api2: %d %+v, want 409 protected_write_unwatched", what, code, p)
		}
	}
	refused("nobody watches")
	rpc := servertest.API{T: t, URL: "http://" + api1.Addr()}.DialRPC("dev-person")
	sub := rpc.Watch("ses-pw")
	rpc.Call("approval/unsubscribe", map[string]any{"subscriptionId": sub})
	refused("the watcher on api1 left")
	rpc.Watch("ses-pw")
	var got record
	if code := person2.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow"}, nil, &got); code != 200 ||
		got.Status != "approved" {
		t.Fatalf("answer on api2 while api1's client watches: %d %+v", code, got)
	}
}

// A decision link of a protected write is refused while no client
// watches its session (409, and the page says why; nothing changes), and
// answers once one does.
func TestDecisionLinkProtectedWrite(t *testing.T) {
	srv, rc := startLinks(t)
	pw := map[string]any{"tool": "Write", "session": "ses-pw", "arguments": map[string]any{"file_path": ".git/config"},
		"subject": map[string]any{"kind": "tool", "protected_write": true}, "timeout": "1h"}
	r, approve, _ := linksFor(t, srv, rc, pw)
	if code, body, _ := page(t, "POST", srv.URL+approve); code != 409 || !strings.Contains(body, "protected write") {
		t.Fatalf("POST while nobody watches: %d %s", code, body)
	}
	if got := getRecord(t, srv, r.ID); got.Status != "pending" || got.Revision != 0 {
		t.Fatalf("the refused link changed the request: %+v", got)
	}
	srv.API(t).DialRPC("hook-person").Watch("ses-pw")
	if code, _, _ := page(t, "POST", srv.URL+approve); code != 200 {
		t.Fatalf("POST while watched: %d", code)
	}
	if got := getRecord(t, srv, r.ID); got.Status != "approved" {
		t.Fatalf("after the link while watched: %+v", got)
	}
}
