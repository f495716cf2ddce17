package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// call is one operation as the table writes it, before a surface
// translates it: the body fields are HTTP's (a query's parameters for a
// GET), the id the request or grant an operation is about.
type call struct {
	op     approvals.Op
	token  string
	id     string
	body   map[string]any
	header map[string]string
}

// outcome is what a caller learns: the HTTP status (a bus reply's Status
// or Nats-Service-Error-Code, 200 for a JSON-RPC result), the problem's
// error, field and reason, and what the case observes besides (note).
type outcome struct {
	Status int
	Error  string
	Field  string
	Reason string
	Note   string
}

// surface runs a call; ok is false when the surface does not offer the
// operation. body is the success's JSON (nil for a refusal).
type surface struct {
	name string
	do   func(t *testing.T, c call) (o outcome, body []byte, ok bool)
}

// problemOutcome reads a problem+json body.
func problemOutcome(status int, data []byte) outcome {
	var p struct{ Error, Field, Reason string }
	_ = json.Unmarshal(data, &p)
	return outcome{Status: status, Error: p.Error, Field: p.Field, Reason: p.Reason}
}

// httpSurface: the real HTTP listener.
func httpSurface(s *servertest.Server) surface {
	return webSurface("http", s.URL, http.DefaultClient, routes, func(req *http.Request, c call) bool {
		req.Header.Set("Authorization", "Bearer "+c.token)
		return true
	})
}

// routes are the HTTP API's routes of each operation.
var routes = map[approvals.Op]func(c call) (string, string){
	approvals.OpSubmit: func(call) (string, string) { return http.MethodPost, "/v1/requests" },
	approvals.OpGet:    func(c call) (string, string) { return http.MethodGet, "/v1/requests/" + c.id },
	approvals.OpList:   func(call) (string, string) { return http.MethodGet, "/v1/requests" },
	approvals.OpAnswer: func(c call) (string, string) { return http.MethodPost, "/v1/requests/" + c.id },
	approvals.OpCancel: func(c call) (string, string) {
		if turn, ok := c.body["turn"].(string); ok {
			return http.MethodPost, "/v1/turns/" + turn + "/cancel"
		}
		return http.MethodPost, "/v1/requests/" + c.id + "/cancel"
	},
	approvals.OpClaim:  func(c call) (string, string) { return http.MethodPost, "/v1/requests/" + c.id + "/claim" },
	approvals.OpGrants: func(call) (string, string) { return http.MethodGet, "/v1/grants" },
	approvals.OpRevoke: func(c call) (string, string) { return http.MethodDelete, "/v1/grants/" + c.id },
}

// webSurface runs a call over HTTP with client, route's method and path,
// and the caller as auth sets it (false: this surface cannot stand for
// the call's caller).
func webSurface(name, base string, client *http.Client, route map[approvals.Op]func(c call) (string, string),
	auth func(req *http.Request, c call) bool) surface {
	return surface{name: name, do: func(t *testing.T, c call) (outcome, []byte, bool) {
		r, ok := route[c.op]
		if !ok {
			return outcome{}, nil, false
		}
		method, path := r(c)
		var rd io.Reader
		if method == http.MethodGet {
			path += "?" + query(c.body)
		} else if c.body != nil && !strings.HasPrefix(path, "/v1/turns/") {
			b, _ := json.Marshal(c.body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		if !auth(req, c) {
			return outcome{}, nil, false
		}
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s %s: %v", name, method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return problemOutcome(resp.StatusCode, data), nil, true
		}
		return outcome{Status: resp.StatusCode}, data, true
	}}
}

func query(body map[string]any) string {
	q := url.Values{}
	for k, v := range body {
		b, _ := json.Marshal(v)
		q.Set(k, strings.Trim(string(b), `"`))
	}
	return q.Encode()
}

// busSurface: a real nats.go client on the embedded server's client port,
// one connection per token, replies in the token's own inbox.
func busSurface(t *testing.T, s *servertest.Server, principals map[string]domain.Ref) surface {
	conns := map[string]*nats.Conn{}
	t.Cleanup(func() {
		for _, nc := range conns {
			nc.Close()
		}
	})
	dial := func(t *testing.T, token string) *nats.Conn {
		if nc := conns[token]; nc != nil {
			return nc
		}
		nc, err := nats.Connect(s.App.Broker.ClientURL(), nats.Token(token), nats.MaxReconnects(0),
			nats.CustomInboxPrefix(events.InboxPrefix(tenant, principals[token])))
		if err != nil {
			t.Fatalf("bus: connect as %s: %v", token, err)
		}
		conns[token] = nc
		return nc
	}
	return surface{name: "bus", do: func(t *testing.T, c call) (outcome, []byte, bool) {
		op, ok := busOps[c.op]
		if !ok {
			return outcome{}, nil, false
		}
		body := map[string]any{}
		for k, v := range c.body {
			body[k] = v
		}
		if c.id != "" {
			body["id"] = c.id
		}
		m := nats.NewMsg(events.APISubject(tenant, op))
		m.Data, _ = json.Marshal(body)
		m.Header.Set("Authorization", "Bearer "+c.token)
		for k, v := range c.header {
			m.Header.Set(k, v)
		}
		reply, err := dial(t, c.token).RequestMsg(m, 15*time.Second)
		if err != nil {
			return outcome{Note: "no reply: " + err.Error()}, nil, true
		}
		if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
			status, _ := strconv.Atoi(code)
			return problemOutcome(status, reply.Data), nil, true
		}
		status, _ := strconv.Atoi(reply.Header.Get("Status"))
		return outcome{Status: status}, reply.Data, true
	}}
}

// busOps are the operations the bus offers, by their subject's op.
var busOps = map[approvals.Op]string{
	approvals.OpSubmit: events.OpSubmit, approvals.OpGet: events.OpGet, approvals.OpList: events.OpList,
	approvals.OpAnswer: events.OpAnswer, approvals.OpCancel: events.OpCancel, approvals.OpClaim: events.OpClaim,
	approvals.OpGrants: events.OpGrants, approvals.OpRevoke: events.OpRevoke,
}

// rpcSurface: a real WebSocket client of GET /v1/rpc. It offers only the
// answer (approval/decide); a connection the upgrade refuses is that
// refusal's outcome.
func rpcSurface(s *servertest.Server) surface {
	return surface{name: "rpc", do: func(t *testing.T, c call) (outcome, []byte, bool) {
		if c.op != approvals.OpAnswer {
			return outcome{}, nil, false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/v1/rpc",
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + c.token}}})
		if err != nil {
			if resp == nil {
				t.Fatalf("rpc: dial: %v", err)
			}
			data, _ := io.ReadAll(resp.Body)
			return problemOutcome(resp.StatusCode, data), nil, true
		}
		defer ws.CloseNow()
		return rpcDecide(ctx, t, ws, c)
	}}
}

// rpcDecide translates an answer into approval/decide: expected is the
// requirement's revision (a request with no stages: source index 0), the
// decision and scope its choice.
func rpcDecide(ctx context.Context, t *testing.T, ws *websocket.Conn, c call) (outcome, []byte, bool) {
	choice := map[string]string{"allow/once": "allow_once", "allow/session": "allow_session",
		"allow/lifetime": "allow_always", "deny/once": "deny"}
	scope, _ := c.body["scope"].(string)
	if scope == "" {
		scope = domain.ScopeOnce
	}
	params := map[string]any{"approvalId": c.id, "choiceId": choice[c.body["decision"].(string)+"/"+scope],
		"requirementId": map[string]any{"sourceIndex": 0, "revision": c.body["expected"]}}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "approval/decide", "params": params})
	if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("rpc: write: %v", err)
	}
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("rpc: read: %v", err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Data json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &m) != nil || string(m.ID) != "1" {
			continue // a notification
		}
		if m.Error == nil {
			return outcome{Status: http.StatusOK}, m.Result, true
		}
		var p struct{ Status int }
		_ = json.Unmarshal(m.Error.Data, &p)
		return problemOutcome(p.Status, m.Error.Data), nil, true
	}
}
