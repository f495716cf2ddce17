package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/adapter"
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
