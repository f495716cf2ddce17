package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/problem"
)

// Subprotocol is the WebSocket subprotocol the server selects.
const Subprotocol = "countersign.v1"

// CloseRevoked is the WebSocket close code of a connection whose token
// (or session) stopped authenticating: removed by a config reload, say
// (SPEC §10). As HTTP's 401, in the 4000–4999 range for applications.
const CloseRevoked websocket.StatusCode = 4401

// bearerProtocol prefixes the token a browser offers as a subprotocol.
const bearerProtocol = "bearer."

// Config wires the handler.
type Config struct {
	Service *approvals.Service
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Closing, when closed, closes every connection with 1001 (going
	// away): at shutdown, since http.Server.Shutdown does not wait for
	// hijacked connections. Default: never.
	Closing <-chan struct{}
	// SendQueue bounds the messages waiting to be written to one client;
	// a client whose queue is full is dropped (1013). Default 256.
	SendQueue int
	// WriteTimeout bounds writing one message; a client that does not
	// take it in time is dropped. Default 10s.
	WriteTimeout time.Duration
	// PingInterval is how often a client is pinged; one that does not
	// answer within the interval is dropped. Default 30s.
	PingInterval time.Duration
	// MaxMessage bounds a client's message; a larger one closes the
	// connection with 1009. Default wire.MaxBody (1 MiB).
	MaxMessage int64
	// MaxSubscriptions bounds the subscriptions of one connection.
	// Default 8.
	MaxSubscriptions int
	// Watchers counts the sessions the clients watch; pass the same to
	// approvals.Config.Watchers. Default: this handler's own, not shared
	// with other processes.
	Watchers *Watchers
	// Sessions authenticates a sign-in session's bearer token (countersign
	// login) when the token is none of the config's; never the cookie, which
	// a page of another site could make a browser send on an upgrade. nil:
	// no sessions.
	Sessions func(r *http.Request, authorization string) approvals.Sessions
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.SendQueue = orDefault(c.SendQueue, 256)
	c.WriteTimeout = orDefault(c.WriteTimeout, 10*time.Second)
	c.PingInterval = orDefault(c.PingInterval, 30*time.Second)
	c.MaxMessage = orDefault(c.MaxMessage, wire.MaxBody)
	c.MaxSubscriptions = orDefault(c.MaxSubscriptions, 8)
	if c.Watchers == nil {
		c.Watchers = NewWatchers(nil, 0, c.Logger)
	}
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Handler serves GET /v1/rpc. It is safe for concurrent use.
type Handler struct {
	cfg      Config
	svc      *approvals.Service
	watchers *Watchers
}

// ErrConfig: New was given a config it cannot run with.
var ErrConfig = errors.New("rpc: bad config")

// Validate reports a config New cannot run with: ErrConfig.
func (c *Config) Validate() error {
	if c.Service == nil {
		return fmt.Errorf("%w: the handler needs the Service", ErrConfig)
	}
	return nil
}

// New validates cfg and builds the handler. Errors: ErrConfig.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Handler{cfg: cfg, svc: cfg.Service, watchers: cfg.Watchers}, nil
}

// ServeHTTP authenticates (401, 403 as problem+json, before upgrading),
// upgrades to a WebSocket and serves the connection until it closes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth := authorization(r)
	c, err := h.svc.Admit(auth, approvals.OpWatch, h.sessions(r, auth))
	if err == nil && !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		err = errNotWebSocket
	}
	if err != nil {
		writeProblem(w, problem.From(err))
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		return // Accept wrote the refusal
	}
	ws.SetReadLimit(h.cfg.MaxMessage)
	newConn(h, ws, c).serve(r.Context())
}

// sessions is the session hook of r's Authenticate (nil without sign-in).
func (h *Handler) sessions(r *http.Request, authorization string) approvals.Sessions {
	if h.cfg.Sessions == nil {
		return nil
	}
	return h.cfg.Sessions(r, authorization)
}

// authorization is the Authorization header, or for browsers (which
// cannot set it on a WebSocket) the token offered as the subprotocol
// bearer.<token> beside countersign.v1.
func authorization(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		return a
	}
	offers := websocketProtocols(r)
	for _, p := range offers {
		if tok, ok := strings.CutPrefix(p, bearerProtocol); ok && hasProtocol(offers, Subprotocol) {
			return "Bearer " + tok
		}
	}
	return ""
}

func websocketProtocols(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

func hasProtocol(list []string, p string) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

func writeProblem(w http.ResponseWriter, p problem.Problem) {
	if p.Retryable() {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
