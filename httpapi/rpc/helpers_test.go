package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// Black-box tests of GET /v1/rpc against a real server (servertest): real
// WebSocket clients, requests submitted over real HTTP.

const (
	tokPerson     = "tok-person"      // person:u-1
	tokPersonRO   = "tok-person-ro"   // person:u-1, approvals:read only
	tokPersonNone = "tok-person-none" // person:u-1, no scope
	tokMain       = "tok-main"        // agent:agt_main (top, decider of agt_prog)
	tokProg       = "tok-prog"        // agent:agt_prog (under agt_main)
	tokX          = "tok-x"           // agent:agt_x of tenant globex
	tokXPerson    = "tok-x-person"    // person:v-1 of tenant globex
)

const rpcYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members:
      - id: u-1
        policy: {allow: ["*"]}
    agents:
      - {id: agt_main, member: u-1}
      - {id: agt_prog, member: u-1, parent: agt_main}
    tokens:
      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-person-ro, principal: "person:u-1", scopes: [approvals:read]}
      - {token: tok-person-none, principal: "person:u-1", scopes: []}
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-prog, principal: "agent:agt_prog", scopes: [requests:write, approvals:read, approvals:write]}
  - id: globex
    members:
      - {id: v-1, policy: {allow: ["*"]}}
    agents:
      - {id: agt_x, member: v-1}
    tokens:
      - {token: tok-x, principal: "agent:agt_x", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-x-person, principal: "person:v-1", scopes: [approvals:read, approvals:write]}
`

func start(t *testing.T) *servertest.Server {
	t.Helper()
	return servertest.Start(t, servertest.WithConfig(rpcYAML))
}

// msg is any JSON-RPC message from the server.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params map[string]any  `json:"params"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	raw []byte
}

// ws is a real WebSocket client of /v1/rpc. Notifications read while
// waiting for a response are kept for next.
type ws struct {
	t       *testing.T
	c       *websocket.Conn
	pending []msg
	nextID  int
}

func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/v1/rpc" }

// dial connects as token (Authorization header).
func dial(t *testing.T, base, token string) *ws {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL(base), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return &ws{t: t, c: c}
}

// write sends raw bytes as one text message.
func (w *ws) write(b []byte) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// read returns the next message from the socket (within 10s).
func (w *ws) read() msg {
	w.t.Helper()
	m, err := w.tryRead(10 * time.Second)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	return m
}

func (w *ws) tryRead(within time.Duration) (msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		return msg{}, err
	}
	var m msg
	if b[0] == '{' {
		if err := json.Unmarshal(b, &m); err != nil {
			w.t.Fatalf("decode %s: %v", b, err)
		}
	}
	m.raw = b
	return m, nil
}

// call sends a request and returns its response; notifications that
// arrive first are kept.
func (w *ws) call(method string, params any) msg {
	w.t.Helper()
	w.nextID++
	id, _ := json.Marshal(w.nextID)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": w.nextID, "method": method, "params": params})
	w.write(b)
	return w.response(id)
}

// response reads until the response with id.
func (w *ws) response(id json.RawMessage) msg {
	w.t.Helper()
	for {
		m := w.read()
		if m.Method == "" && bytes.Equal(m.ID, id) {
			return m
		}
		w.pending = append(w.pending, m)
	}
}

// next returns the next notification.
func (w *ws) next() msg {
	w.t.Helper()
	if len(w.pending) > 0 {
		m := w.pending[0]
		w.pending = w.pending[1:]
		return m
	}
	return w.read()
}

// expect returns the next notification, which must be method about id.
func (w *ws) expect(method, id string) msg {
	w.t.Helper()
	m := w.next()
	if m.Method != method || m.Params["approvalId"] != id {
		w.t.Fatalf("got %s about %v, want %s about %s: %s", m.Method, m.Params["approvalId"], method, id, m.raw)
	}
	return m
}

// subscribe subscribes and returns the result.
func (w *ws) subscribe(params map[string]any) map[string]any {
	w.t.Helper()
	m := w.call("approval/subscribe", params)
	if m.Error != nil {
		w.t.Fatalf("subscribe: %s", m.raw)
	}
	return m.Result
}

// decide sends approval/decide for the requirement of a requested
// notification n with choiceID.
func (w *ws) decide(n msg, choiceID string, extra ...any) msg {
	w.t.Helper()
	p := map[string]any{"approvalId": n.Params["approvalId"], "requirementId": n.Params["currentRequirementId"], "choiceId": choiceID}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i].(string)] = extra[i+1]
	}
	return w.call("approval/decide", p)
}

// wantError checks a response's error code and, if given, its problem's
// error and field.
func wantError(t *testing.T, what string, m msg, code int, problem ...string) {
	t.Helper()
	if m.Error == nil || m.Error.Code != code {
		t.Errorf("%s: got %s, want error %d", what, m.raw, code)
		return
	}
	if len(problem) > 0 && m.Error.Data["error"] != problem[0] {
		t.Errorf("%s: problem error %v, want %s (%s)", what, m.Error.Data["error"], problem[0], m.raw)
	}
	if len(problem) > 1 && m.Error.Data["field"] != problem[1] {
		t.Errorf("%s: problem field %v, want %s (%s)", what, m.Error.Data["field"], problem[1], m.raw)
	}
}

// submit submits a call as token over HTTP and returns the record.
func submit(t *testing.T, s *servertest.Server, token string, body map[string]any) map[string]any {
	t.Helper()
	if _, ok := body["arguments"]; !ok {
		body["arguments"] = map[string]any{}
	}
	code, data := s.API(t).Do(http.MethodPost, "/v1/requests", token, body)
	if code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, data)
	}
	var rec map[string]any
	_ = json.Unmarshal(data, &rec)
	return rec
}

// record reads a request over HTTP.
func record(t *testing.T, s *servertest.Server, token, id string) map[string]any {
	t.Helper()
	code, data := s.API(t).Do(http.MethodGet, "/v1/requests/"+id, token, nil)
	if code != http.StatusOK {
		t.Fatalf("get %s: %d %s", id, code, data)
	}
	var rec map[string]any
	_ = json.Unmarshal(data, &rec)
	return rec
}

// choiceIDs lists the choiceIds of a notification's availableChoices.
func choiceIDs(n msg) string {
	var ids []string
	list, _ := n.Params["availableChoices"].([]any)
	for _, c := range list {
		ids = append(ids, c.(map[string]any)["choiceId"].(string))
	}
	return strings.Join(ids, ",")
}
