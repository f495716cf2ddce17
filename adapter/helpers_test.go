package adapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/events"
)

// Demo tenant tokens (SPEC §10).
const (
	tokPerson     = "dev-person"
	tokMain       = "dev-main"
	tokProgrammer = "dev-programmer"
)

// newClient returns an adapter for url and token with quick retries.
func newClient(t testing.TB, url, token string, opts ...adapter.Option) *adapter.Client {
	t.Helper()
	base := []adapter.Option{adapter.WithBackoff(20*time.Millisecond, 300*time.Millisecond)}
	c, err := adapter.New(url, token, append(base, opts...)...)
	if err != nil {
		t.Fatalf("adapter.New: %v", err)
	}
	return c
}

// api speaks to a countersign server the way a person or agent decider does.
type api struct {
	t   testing.TB
	url string
}

func (a api) do(method, path, token string, body any) (int, []byte) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// get returns the record as token sees it.
func (a api) get(token string, id events.RequestID) events.Request {
	a.t.Helper()
	code, data := a.do(http.MethodGet, "/v1/requests/"+string(id), token, nil)
	if code != http.StatusOK {
		a.t.Fatalf("GET %s: %d %s", id, code, data)
	}
	var r events.Request
	if err := json.Unmarshal(data, &r); err != nil {
		a.t.Fatalf("GET %s: %v", id, err)
	}
	return r
}

// pending lists the requests waiting for token's answer.
func (a api) pending(token string) []events.Request {
	a.t.Helper()
	code, data := a.do(http.MethodGet, "/v1/requests?status=pending", token, nil)
	if code != http.StatusOK {
		a.t.Fatalf("inbox: %d %s", code, data)
	}
	var page struct {
		Items []events.Request `json:"items"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		a.t.Fatalf("inbox: %v", err)
	}
	return page.Items
}

// awaitPending waits until token's inbox holds a pending request for tool,
// and returns it.
func (a api) awaitPending(token, tool string) events.Request {
	a.t.Helper()
	var got events.Request
	eventually(a.t, 10*time.Second, func() bool {
		for _, r := range a.pending(token) {
			if r.Capability.Target == tool && r.Approver != nil {
				got = r
				return true
			}
		}
		return false
	}, "a pending request for %s in the inbox of %s", tool, token)
	return got
}

// answer answers id as token.
func (a api) answer(token string, id events.RequestID, decision, reason string) events.Request {
	a.t.Helper()
	rev := a.get(token, id).Revision
	body := map[string]any{"expected": rev, "decision": decision, "reason": reason}
	code, data := a.do(http.MethodPost, "/v1/requests/"+string(id), token, body)
	if code != http.StatusOK {
		a.t.Fatalf("answer %s %s: %d %s", decision, id, code, data)
	}
	var r events.Request
	_ = json.Unmarshal(data, &r)
	return r
}

// eventually polls cond until it holds or within passes.
func eventually(t testing.TB, within time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+format, args...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// result is what a Do in a goroutine came to.
type result struct {
	out adapter.Outcome
	err error
}

// doAsync runs c.Do in a goroutine; runs counts calls of run.
func doAsync(ctx context.Context, c *adapter.Client, call adapter.Call, runs *counter) <-chan result {
	ch := make(chan result, 1)
	go func() {
		o, err := c.Do(ctx, call, runs.run)
		ch <- result{o, err}
	}()
	return ch
}

func wait(t testing.TB, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("Do did not return")
	}
	return result{}
}

// counter counts runs of a tool.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) run(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return nil
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// call is a tool call with fixed ids.
func call(tool string) adapter.Call {
	return adapter.Call{
		Tool:       tool,
		Arguments:  json.RawMessage(`{"payment_id": "payment_123", "amount": 4900, "currency": "GBP"}`),
		Session:    "ses-1",
		Turn:       "t-1",
		ToolCallID: fmt.Sprintf("call-%d", time.Now().UnixNano()),
		Reason:     "Duplicate charge confirmed by the customer.",
	}
}

// faultProxy is a TCP proxy in front of the server that injects faults
// into the next connections it accepts, one fault per connection, in order.
type faultProxy struct {
	t      testing.TB
	ln     net.Listener
	target string
	mu     sync.Mutex
	faults []fault
	conns  []net.Conn
	drops  int // responses dropped so far
}

// fault is what happens to one proxied connection.
type fault struct {
	// dropResponse forwards the request, then closes the connection when
	// the answer starts: the server did the work, the client sees none.
	dropResponse bool
	// delayRequest holds the request this long before forwarding it.
	delayRequest time.Duration
}

func newFaultProxy(t testing.TB, serverURL string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, ln: ln, target: strings.TrimPrefix(serverURL, "http://")}
	t.Cleanup(p.close)
	go p.serve()
	return p
}

func (p *faultProxy) URL() string { return "http://" + p.ln.Addr().String() }

// inject queues f for the next accepted connection.
func (p *faultProxy) inject(f fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, f)
}

// dropped is how many responses the proxy dropped.
func (p *faultProxy) dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.drops
}

func (p *faultProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *faultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c, p.take(c))
	}
}

func (p *faultProxy) take(c net.Conn) fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = append(p.conns, c)
	if len(p.faults) == 0 {
		return fault{}
	}
	f := p.faults[0]
	p.faults = p.faults[1:]
	return f
}

func (p *faultProxy) handle(c net.Conn, f fault) {
	defer c.Close()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		if f.delayRequest > 0 {
			time.Sleep(f.delayRequest) // the injected fault, not synchronisation
		}
		_, _ = io.Copy(up, c)
	}()
	if f.dropResponse {
		var b [1]byte
		if n, _ := up.Read(b[:]); n > 0 {
			p.mu.Lock()
			p.drops++
			p.mu.Unlock()
		}
		return
	}
	_, _ = io.Copy(c, up)
}
