package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config says which NATS to use.
type Config struct {
	// URLs of an external cluster, comma-separated; empty runs the embedded
	// server with its store under DataDir/jetstream.
	URLs string
	// DataDir holds the embedded server's store. Default "./data".
	DataDir string
	// Logger receives connection events. Default slog.Default().
	Logger *slog.Logger
	// Listen is the embedded server's client address ("host:port", port 0
	// for a random one). "" or "off": in-process connections only.
	Listen string
	// Replicas of streams and buckets. Default 1 embedded, 3 with URLs.
	Replicas int
	// Auth authenticates tenant tokens on the embedded server's client
	// port. It may be set later with SetAuthenticator; until then tenant
	// tokens are refused.
	Auth Authenticator
	// CalloutSeed, with URLs, makes this process an auth callout service
	// of the external cluster: the seed (SA…) of the account nkey that
	// the cluster's auth_callout names as issuer. Empty: no callout.
	CalloutSeed string
}

// Broker is a live NATS connection and, when embedded, its server.
type Broker struct {
	Conn     *nats.Conn
	JS       jetstream.JetStream
	Server   *server.Server // nil when external
	Replicas int            // Config.Replicas
	urls     string
	extra    []*nats.Conn
	log      *slog.Logger
	gate     *gate
	callout  *callout // nil unless Config.CalloutSeed
	staged   []staged // this run's (StageBatchesInMemory)
}

// Interest reports whether a connection to the embedded server is
// subscribed to subject, for messages sent at most once that nobody
// needs to be built for; nil when the server is external, whose interest
// this process does not see (send them all).
func (b *Broker) Interest() func(subject string) bool {
	if b.Server == nil {
		return nil
	}
	s := b.Server
	return func(subject string) bool { return s.GlobalAccount().SubscriptionInterest(subject) }
}

// reconnectWait is the pause between reconnect attempts to an external
// NATS: short, so that a restarted server is back in use (watchers
// restarted, streams healed) well within a second.
const reconnectWait = 250 * time.Millisecond

// asyncErrors logs what NATS reports outside any call (a slow consumer, a
// consumer a restarted server no longer has) instead of printing it.
func asyncErrors(log *slog.Logger) nats.Option {
	if log == nil {
		log = slog.Default()
	}
	return nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
		subject := ""
		if sub != nil {
			subject = sub.Subject
		}
		// A refused publish of the responder (a reply subject a tenant named
		// outside its inbox) is the tenant's doing, not ours: debug only.
		level := slog.LevelInfo
		if errors.Is(err, nats.ErrPermissionViolation) {
			level = slog.LevelDebug
		}
		log.Log(context.Background(), level, "nats async error", "err", err, "subject", subject)
	})
}

// Connect opens one more connection (and its JetStream context) to the same
// NATS, closed with the broker. Separate connections keep one flow (say,
// the watchers' deliveries) from queueing behind another (the API's writes)
// on a single socket or in-process pipe.
func (b *Broker) Connect(name string) (jetstream.JetStream, error) {
	return b.connectAs(name, InternalUser)
}

// ConnectResponder opens the connection that answers the bus API: on the
// embedded server as ResponderUser, which may publish only into tenant
// inboxes (on an external cluster, restrict the user of nats_url the same
// way in its config).
func (b *Broker) ConnectResponder(name string) (*nats.Conn, error) {
	js, err := b.connectAs(name, ResponderUser)
	if err != nil {
		return nil, err
	}
	return js.Conn(), nil
}

func (b *Broker) connectAs(name, user string) (jetstream.JetStream, error) {
	opts := []nats.Option{nats.Name("countersign-" + name), nats.MaxReconnects(-1), asyncErrors(b.log)}
	url := b.urls
	if b.Server != nil {
		opts, url = append(opts, nats.InProcessServer(b.Server), nats.UserInfo(user, b.gate.password)), ""
	} else {
		opts = append(opts, nats.RetryOnFailedConnect(true), nats.ReconnectWait(reconnectWait))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("broker: connect %s: %w", name, err)
	}
	b.extra = append(b.extra, nc)
	return jetstream.New(nc)
}

// EmbeddedOptions returns the embedded server's options for dataDir:
// JetStream on, SyncAlways on, no client port (in-process connections
// only; Start opens the port Config.Listen names).
func EmbeddedOptions(dataDir string) *server.Options {
	return &server.Options{
		ServerName: "countersign-embedded",
		JetStream:  true,
		StoreDir:   filepath.Join(dataDir, "jetstream"),
		SyncAlways: true,
		// A request body may be 1 MiB; its record adds the rest.
		MaxPayload: 8 << 20,
		DontListen: true,
		NoSigs:     true,
		NoLog:      true,
	}
}

// Start connects per cfg. Close releases everything it started.
func Start(ctx context.Context, cfg Config) (*Broker, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DataDir == "" {
		cfg.DataDir = "./data"
	}
	if cfg.URLs != "" {
		if cfg.Replicas == 0 {
			cfg.Replicas = 3
		}
		return connectExternal(cfg)
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	return startEmbedded(ctx, cfg)
}

// PortTakenError: a port countersign is to listen on is in use by
// something else (the embedded NATS server's client port, or with
// package app the HTTP port).
type PortTakenError struct {
	What string // "nats" or "http"
	Addr string
	Err  error
}

func (e *PortTakenError) Error() string {
	return fmt.Sprintf("%s listen %s: the address is in use by another process", e.What, e.Addr)
}

func (e *PortTakenError) Unwrap() error { return e.Err }

// PortTaken returns a *PortTakenError when err says the address is in
// use, else err.
func PortTaken(what, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return &PortTakenError{What: what, Addr: addr, Err: err}
	}
	return err
}

// readyWithin bounds how long the embedded server may take to accept
// connections once its port is known to be free.
const readyWithin = 30 * time.Second

func startEmbedded(ctx context.Context, cfg Config) (*Broker, error) {
	opts := EmbeddedOptions(cfg.DataDir)
	if err := setListen(opts, cfg.Listen); err != nil {
		return nil, err
	}
	if err := portFree(opts); err != nil {
		return nil, err
	}
	g := newGate(cfg.Auth)
	opts.CustomClientAuthentication = g
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("broker: embedded server: %w", err)
	}
	s.Start()
	if err := waitReady(ctx, s); err != nil {
		s.Shutdown()
		return nil, err
	}
	nc, err := nats.Connect("", nats.InProcessServer(s), nats.UserInfo(InternalUser, g.password),
		nats.Name("countersign"), nats.MaxReconnects(-1))
	if err != nil {
		s.Shutdown()
		return nil, fmt.Errorf("broker: connect embedded: %w", err)
	}
	b, err := newBroker(nc, s, g, cfg.Replicas)
	if b != nil {
		b.log = cfg.Logger
	}
	return b, err
}

// setListen opens the client port listen names on opts ("" or "off":
// none; port 0: a random one).
func setListen(opts *server.Options, listen string) error {
	if listen == "" || listen == ListenOff {
		return nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("broker: nats listen %q: %w", listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("broker: nats listen %q: bad port", listen)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	opts.DontListen, opts.Host, opts.Port = false, host, p
	return nil
}

// portFree checks, before the server starts, that the client port opts
// names can be bound: the server itself, on a port taken, would only
// never become ready.
func portFree(opts *server.Options) error {
	if opts.DontListen || opts.Port == server.RANDOM_PORT {
		return nil
	}
	addr := net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if pt := PortTaken("nats", addr, err); pt != err {
			return pt
		}
		return fmt.Errorf("broker: nats listen %s: %w", addr, err)
	}
	return ln.Close()
}

// waitReady waits until s accepts connections, ctx ends (a signal while
// starting), or readyWithin passes.
func waitReady(ctx context.Context, s *server.Server) error {
	deadline := time.Now().Add(readyWithin)
	for !s.ReadyForConnections(100 * time.Millisecond) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("broker: stopped while the embedded server started: %w", err)
		}
		if time.Now().After(deadline) {
			return errors.New("broker: embedded server did not become ready")
		}
	}
	return nil
}

// ListenOff as Config.Listen turns the embedded server's client port off.
const ListenOff = "off"

// SetAuthenticator sets (or replaces) the lookup tenant tokens are
// checked against, on the embedded server and by the auth callout. The
// callout service starts answering only now, so a process still loading
// its views never refuses a good token on the cluster's behalf.
func (b *Broker) SetAuthenticator(a Authenticator) error {
	if a == nil {
		return errors.New("broker: nil authenticator")
	}
	first := b.gate.auth.Swap(&a) == nil
	if b.callout != nil && first {
		return b.callout.subscribe(b.Conn)
	}
	return nil
}

// ClientURL is the embedded server's client URL (nats://host:port), or ""
// when it has no client port or NATS is external.
func (b *Broker) ClientURL() string {
	if b.Server == nil || b.Server.Addr() == nil {
		return ""
	}
	return "nats://" + b.Server.Addr().String()
}

func connectExternal(cfg Config) (*Broker, error) {
	log := cfg.Logger
	nc, err := nats.Connect(strings.TrimSpace(cfg.URLs), nats.Name("countersign"), nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true), nats.ReconnectWait(reconnectWait), asyncErrors(log),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("nats disconnected", "err", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", "url", c.ConnectedUrl()) }))
	if err != nil {
		return nil, fmt.Errorf("broker: connect %s: %w", cfg.URLs, err)
	}
	b, err := newBroker(nc, nil, newGate(nil), cfg.Replicas)
	if err != nil {
		return nil, err
	}
	b.urls, b.log = strings.TrimSpace(cfg.URLs), log
	if cfg.CalloutSeed != "" {
		if b.callout, err = newCallout(cfg.CalloutSeed, b.gate, log); err != nil {
			b.Close()
			return nil, err
		}
	}
	if cfg.Auth != nil {
		if err := b.SetAuthenticator(cfg.Auth); err != nil {
			b.Close()
			return nil, err
		}
	}
	return b, nil
}

func newBroker(nc *nats.Conn, s *server.Server, g *gate, replicas int) (*Broker, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("broker: jetstream: %w", err)
	}
	return &Broker{Conn: nc, JS: js, Server: s, Replicas: replicas, gate: g}, nil
}

// Ready reports whether NATS and JetStream answer within ctx.
func (b *Broker) Ready(ctx context.Context) error {
	if !b.Conn.IsConnected() {
		return errors.New("broker: not connected")
	}
	_, err := b.JS.AccountInfo(ctx)
	return err
}

// Close drains the connections and shuts down the embedded server.
func (b *Broker) Close() {
	for _, nc := range b.extra {
		_ = nc.Drain()
	}
	if err := b.Conn.Drain(); err != nil {
		b.Conn.Close()
	}
	for i := 0; i < 100 && !b.Conn.IsClosed(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if b.Server != nil {
		b.Server.Shutdown()
		b.Server.WaitForShutdown()
		b.unstage()
	}
}
