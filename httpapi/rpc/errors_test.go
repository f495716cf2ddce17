package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestBadDecides: each bad decide is a JSON-RPC error whose data is the
// problem, and changes nothing.
func TestBadDecides(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"inbox": true})
	id := submit(t, s, tokMain, map[string]any{"tool": "deploy"})["id"].(string)
	n := w.expect("approval/requested", id)
	req := n.Params["currentRequirementId"]
	x := dial(t, s.URL, tokXPerson)
	ro := dial(t, s.URL, tokPersonRO)

	cases := []struct {
		what    string
		c       *ws
		params  map[string]any
		code    int
		problem []string
	}{
		{"unknown approvalId", w, map[string]any{"approvalId": "req_01JC000000000000000000000", "requirementId": req, "choiceId": "allow_once"}, -32004, []string{"RequestNotFound"}},
		{"not an id", w, map[string]any{"approvalId": "nope", "requirementId": req, "choiceId": "allow_once"}, -32004, []string{"RequestNotFound"}},
		{"another tenant", x, map[string]any{"approvalId": id, "requirementId": req, "choiceId": "allow_once"}, -32004, []string{"RequestNotFound"}},
		{"stale revision", w, map[string]any{"approvalId": id, "requirementId": map[string]any{"sourceIndex": 0, "revision": 3}, "choiceId": "allow_once"}, -32009, []string{"RequestConflict"}},
		{"stale sourceIndex", w, map[string]any{"approvalId": id, "requirementId": map[string]any{"sourceIndex": 1, "revision": 0}, "choiceId": "allow_once"}, -32009, []string{"RequestConflict"}},
		{"unknown choice", w, map[string]any{"approvalId": id, "requirementId": req, "choiceId": "allow_forever"}, -32602, []string{"InvalidRequest", "choiceId"}},
		{"no requirementId", w, map[string]any{"approvalId": id, "choiceId": "allow_once"}, -32602, []string{"InvalidRequest", "requirementId"}},
		{"no approvalId", w, map[string]any{"requirementId": req, "choiceId": "allow_once"}, -32602, []string{"InvalidRequest", "approvalId"}},
		{"unknown field", w, map[string]any{"approvalId": id, "requirementId": req, "choiceId": "allow_once", "scope": "lifetime"}, -32602, []string{"InvalidRequest", "scope"}},
		{"wrong type", w, map[string]any{"approvalId": 7, "requirementId": req, "choiceId": "allow_once"}, -32602, []string{"InvalidRequest", "approvalId"}},
		{"without approvals:write", ro, map[string]any{"approvalId": id, "requirementId": req, "choiceId": "allow_once"}, -32003, []string{"Forbidden"}},
	}
	for _, tc := range cases {
		wantError(t, tc.what, tc.c.call("approval/decide", tc.params), tc.code, tc.problem...)
	}
	if rec := record(t, s, tokPerson, id); rec["revision"] != 0.0 || rec["status"] != "pending" {
		t.Errorf("bad decides changed the request: %v at %v", rec["status"], rec["revision"])
	}
	// The same decide by another caller who is not the approver: 409 as over HTTP.
	main := dial(t, s.URL, tokMain)
	wantError(t, "not the approver", main.call("approval/decide", map[string]any{"approvalId": id, "requirementId": req, "choiceId": "deny"}), -32009, "RequestConflict")
	// A good decide, then its safe repeat (200 as over HTTP), then a different one (409).
	if d := w.decide(n, "deny"); d.Error != nil {
		t.Fatalf("deny: %s", d.raw)
	}
	if d := w.decide(n, "deny"); d.Error != nil || d.Result["status"] != "denied" {
		t.Errorf("safe repeat: %s", d.raw)
	}
	wantError(t, "allow after deny", w.decide(n, "allow_once"), -32009, "RequestConflict")
}

// TestMalformedMessages: protocol errors, and a batch whose bad member
// gets its error while the others are answered.
func TestMalformedMessages(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	cases := []struct {
		what, msg string
		code      int
	}{
		{"not JSON", `{"jsonrpc":"2.0",`, -32700},
		{"no jsonrpc", `{"id":1,"method":"approval/subscribe","params":{"inbox":true}}`, -32600},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"approval/subscribe"}`, -32600},
		{"no method", `{"jsonrpc":"2.0","id":1}`, -32600},
		{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"approval/subscribe","extra":1}`, -32600},
		{"duplicate key", `{"jsonrpc":"2.0","id":1,"method":"approval/decide","method":"approval/subscribe"}`, -32600},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"approval/subscribe"}`, -32600},
		{"empty batch", `[]`, -32600},
		{"a string", `"hello"`, -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"approval/approve"}`, -32601},
		{"id null is answered", `{"jsonrpc":"2.0","id":null,"method":"approval/approve"}`, -32601},
		{"params an array", `{"jsonrpc":"2.0","id":1,"method":"approval/subscribe","params":[true]}`, -32602},
		{"subscribe both", `{"jsonrpc":"2.0","id":1,"method":"approval/subscribe","params":{"inbox":true,"sessionIds":["s"]}}`, -32602},
		{"subscribe neither", `{"jsonrpc":"2.0","id":1,"method":"approval/subscribe","params":{}}`, -32602},
		{"unsubscribe unknown", `{"jsonrpc":"2.0","id":1,"method":"approval/unsubscribe","params":{"subscriptionId":"sub-9"}}`, -32602},
	}
	for _, tc := range cases {
		w.write([]byte(tc.msg))
		m := w.read()
		wantError(t, tc.what, m, tc.code)
	}
	// A notification (no id) is not answered: the next answer is the ping's.
	w.write([]byte(`{"jsonrpc":"2.0","method":"approval/unsubscribe","params":{"subscriptionId":"x"}}`))
	w.write([]byte(`{"jsonrpc":"2.0","id":"after","method":"approval/unsubscribe","params":{"subscriptionId":"x"}}`))
	if m := w.read(); string(m.ID) != `"after"` {
		t.Errorf("a notification was answered: %s", m.raw)
	}

	w.write([]byte(`[{"jsonrpc":"2.0","id":1,"method":"approval/subscribe","params":{"inbox":true}},
		{"jsonrpc":"2.0","id":2,"method":"approval/nope"},
		{"jsonrpc":"2.0","id":3,"method":"approval/subscribe","params":{"sessionIds":["s-1"]}}]`))
	m := w.read()
	var batch []msg
	if err := json.Unmarshal(m.raw, &batch); err != nil || len(batch) != 3 {
		t.Fatalf("batch answer %s", m.raw)
	}
	if batch[0].Error != nil || batch[0].Result["subscriptionId"] == nil || batch[2].Error != nil || batch[2].Result["subscriptionId"] == nil {
		t.Errorf("good members not answered: %s", m.raw)
	}
	if batch[1].Error == nil || batch[1].Error.Code != -32601 || string(batch[1].ID) != "2" {
		t.Errorf("bad member: %s", m.raw)
	}
}

// TestOversizeMessageCloses1009: a message over 1 MiB closes the socket
// with 1009; one just under is read (and refused as a bad request).
func TestOversizeMessageCloses1009(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	under := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"` + strings.Repeat("a", 1<<20-100) + `"}}`
	w.write([]byte(under))
	wantError(t, "just under 1 MiB", w.read(), -32601)
	w.write([]byte(strings.Repeat(" ", 1<<20+1)))
	_, err := w.tryRead(10 * time.Second)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Errorf("close status %d (%v), want 1009", got, err)
	}
}

// TestUpgradeRefusals: 401 and 403 as problem+json before upgrading, 400
// for a plain GET; the browser's subprotocol pair authenticates and
// countersign.v1 is selected.
func TestUpgradeRefusals(t *testing.T) {
	t.Parallel()
	s := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		what   string
		header http.Header
		status int
		code   string
	}{
		{"no token", nil, 401, "Unauthenticated"},
		{"unknown token", http.Header{"Authorization": {"Bearer nope"}}, 401, "Unauthenticated"},
		{"no approvals:read", http.Header{"Authorization": {"Bearer " + tokPersonNone}}, 403, "Forbidden"},
		{"bearer subprotocol without countersign.v1", http.Header{"Sec-WebSocket-Protocol": {"bearer." + tokPerson}}, 401, "Unauthenticated"},
	} {
		_, resp, err := websocket.Dial(ctx, wsURL(s.URL), &websocket.DialOptions{HTTPHeader: tc.header})
		if err == nil || resp == nil || resp.StatusCode != tc.status {
			t.Errorf("%s: %v %v, want %d", tc.what, resp, err, tc.status)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		var p map[string]any
		if json.Unmarshal(body, &p) != nil || p["error"] != tc.code || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %s %s", tc.what, resp.Header.Get("Content-Type"), body)
		}
	}
	code, body := s.API(t).Do(http.MethodGet, "/v1/rpc", tokPerson, nil)
	if code != http.StatusBadRequest || !strings.Contains(string(body), "InvalidRequest") {
		t.Errorf("plain GET: %d %s", code, body)
	}
	c, _, err := websocket.Dial(ctx, wsURL(s.URL), &websocket.DialOptions{Subprotocols: []string{"countersign.v1", "bearer." + tokPerson}})
	if err != nil {
		t.Fatalf("browser dial: %v", err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "countersign.v1" {
		t.Errorf("subprotocol %q", c.Subprotocol())
	}
}

// TestShutdownClosesSockets: at shutdown every connection closes with 1001.
func TestShutdownClosesSockets(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"inbox": true})
	done := make(chan struct{})
	go func() { s.Stop(); close(done) }()
	_, err := w.tryRead(20 * time.Second)
	if got := websocket.CloseStatus(err); got != websocket.StatusGoingAway {
		t.Errorf("close status %d (%v), want 1001", got, err)
	}
	<-done
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the socket stayed open through shutdown")
	}
}
