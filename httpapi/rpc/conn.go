package rpc

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
)

// conn is one client connection. Its read loop runs the calls in order;
// one writer goroutine drains the bounded send queue; each subscription
// feeds the queue from its own goroutine.
type conn struct {
	h      *Handler
	ws     *websocket.Conn
	caller approvals.Caller
	out    chan []byte
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	drop   sync.Once

	mu      sync.Mutex // guards subs, resumed and nextID
	subs    map[string]*subscription
	resumed map[string]*subscription // by session: session/resume's
	nextID  int

	showMu  sync.Mutex // guards shown, asking, asks and nextAsk; held while a change is sent
	shown   map[domain.RequestID]*shown
	asking  bool           // session/resume was called: show as approval/request
	asks    map[string]ask // approval/request sent, by JSON-RPC id, awaiting the result
	nextAsk int
}

func newConn(h *Handler, ws *websocket.Conn, c approvals.Caller) *conn {
	return &conn{h: h, ws: ws, caller: c, out: make(chan []byte, h.cfg.SendQueue), subs: map[string]*subscription{},
		resumed: map[string]*subscription{}, shown: map[domain.RequestID]*shown{}, asks: map[string]ask{}}
}

// serve runs the connection until the client or the server closes it.
func (c *conn) serve(ctx context.Context) {
	c.ctx, c.cancel = context.WithCancel(ctx)
	defer c.cleanup()
	held, release := c.h.svc.Hold(c.ctx, c.caller)
	defer release()
	c.spawn(func() { c.writeLoop(ctx) })
	c.spawn(func() { c.pingLoop(ctx) })
	c.spawn(c.closeOnShutdown)
	c.spawn(func() { c.closeOnRevoke(held) })
	for { // read with ctx, not c.ctx: cancelling c.ctx must not cut the close frame
		_, msg, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		c.handle(msg)
	}
}

func (c *conn) spawn(fn func()) {
	c.wg.Add(1)
	go func() { defer c.wg.Done(); fn() }()
}

// cleanup ends the subscriptions and the goroutines, then the socket.
func (c *conn) cleanup() {
	c.cancel()
	c.mu.Lock()
	for id, s := range c.subs {
		c.h.watchers.remove(s.watched())
		delete(c.subs, id)
	}
	c.mu.Unlock()
	c.wg.Wait()
	_ = c.ws.CloseNow()
}

// close drops the client with code: a close frame is attempted (bounded
// by the library's own timeouts), and everything of the connection ends.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.drop.Do(func() {
		go func() { _ = c.ws.Close(code, reason) }()
		c.cancel()
	})
}

// send queues v for the writer; a full queue drops the client, never
// blocking whoever sends.
func (c *conn) send(v any) {
	if c.ctx.Err() != nil {
		return // closing: nothing more is written
	}
	b, err := json.Marshal(v)
	if err != nil {
		c.h.cfg.Logger.Error("rpc: encode", "err", err)
		return
	}
	select {
	case c.out <- b:
	default:
		c.h.cfg.Logger.Info("rpc: client dropped: send queue full", "principal", c.caller.Principal)
		c.close(websocket.StatusTryAgainLater, "send queue full")
	}
}

func (c *conn) notify(method string, params any) {
	c.send(Notification{JSONRPC: "2.0", Method: method, Params: params})
}

// writeLoop writes the queue until the connection ends. Each write is
// bounded by WriteTimeout under ctx, not under c.ctx: ending c.ctx while
// a write returns would cut the socket before close's frame.
func (c *conn) writeLoop(ctx context.Context) {
	for {
		select {
		case <-c.ctx.Done():
			return
		case b := <-c.out:
			ctx, cancel := context.WithTimeout(ctx, c.h.cfg.WriteTimeout)
			err := c.ws.Write(ctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				c.close(websocket.StatusPolicyViolation, "write timed out")
				return
			}
		}
	}
}

// pingLoop pings the client every PingInterval (under ctx, as writeLoop).
func (c *conn) pingLoop(ctx context.Context) {
	t := time.NewTicker(c.h.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(ctx, c.h.cfg.PingInterval)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil {
				c.close(websocket.StatusPolicyViolation, "no pong")
				return
			}
		}
	}
}

// closeOnRevoke closes the connection with CloseRevoked once its token
// or session stops authenticating (approvals.Service.Hold; SPEC §10).
func (c *conn) closeOnRevoke(held context.Context) {
	<-held.Done()
	if approvals.Revoked(held) {
		c.h.cfg.Logger.Info("rpc: client dropped: its token no longer authenticates", "principal", c.caller.Principal)
		c.close(CloseRevoked, "token revoked")
	}
}

func (c *conn) closeOnShutdown() {
	select {
	case <-c.h.cfg.Closing:
		c.close(websocket.StatusGoingAway, "server shutting down")
	case <-c.ctx.Done():
	}
}
