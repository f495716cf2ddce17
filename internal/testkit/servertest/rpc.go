package servertest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// RPC is a real WebSocket client of GET /v1/rpc that makes calls and
// skips the notifications in between.
type RPC struct {
	api  API
	c    *websocket.Conn
	next int
}

// DialRPC connects to /v1/rpc as token; the connection closes when the
// test ends.
func (a API) DialRPC(token string) *RPC {
	a.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(a.URL, "http")+"/v1/rpc",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		a.T.Fatalf("dial /v1/rpc: %v", err)
	}
	c.SetReadLimit(64 << 20)
	a.T.Cleanup(func() { _ = c.CloseNow() })
	return &RPC{api: a, c: c}
}

// Call sends method with params and returns its result, failing the test
// on an error response.
func (r *RPC) Call(method string, params any) map[string]any {
	r.api.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.next, "method": method, "params": params})
	if err := r.c.Write(ctx, websocket.MessageText, b); err != nil {
		r.api.T.Fatalf("%s: %v", method, err)
	}
	for {
		_, data, err := r.c.Read(ctx)
		if err != nil {
			r.api.T.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     *int           `json:"id"`
			Result map[string]any `json:"result"`
		}
		if json.Unmarshal(data, &m) != nil || m.ID == nil || *m.ID != r.next {
			continue // a notification
		}
		if m.Result == nil {
			r.api.T.Fatalf("%s refused: %s", method, data)
		}
		return m.Result
	}
}

// Watch subscribes to sessions and returns the subscription's id, once
// the server has it.
func (r *RPC) Watch(sessions ...string) string {
	r.api.T.Helper()
	id, _ := r.Call("approval/subscribe", map[string]any{"sessionIds": sessions})["subscriptionId"].(string)
	return id
}
