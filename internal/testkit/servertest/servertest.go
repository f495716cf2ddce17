package servertest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/notify"
)

// Demo tokens of the demo tenant.
const (
	TokenPerson     = "dev-person"
	TokenMain       = "dev-main"
	TokenProgrammer = "dev-programmer"
	TokenSub        = "dev-sub"
)

// Server is a running test server.
type Server struct {
	URL   string // http://127.0.0.1:port
	Dir   string // the data directory, kept across Restart
	App   *app.App
	stop  context.CancelFunc // ends App's Run
	ran   chan error         // App's Run's error, once it returned
	cfg   *config.Config
	addr  string
	clock clock.Clock
	tune  notify.Tuning
	file  string
	ln    net.Listener // the first start's, when WithListener gave one
}

type options struct {
	file  string
	yaml  string
	log   *slog.Logger
	clock clock.Clock
	tune  notify.Tuning
	ln    net.Listener
}

// WithListener serves on ln (whose address the config may name, as
// public_url) instead of a fresh port.
func WithListener(ln net.Listener) Option { return func(o *options) { o.ln = ln } }

// Option configures Start.
type Option func(*options)

// WithConfig runs the server with this countersign.yaml content instead of
// the demo tenant.
func WithConfig(yaml string) Option { return func(o *options) { o.yaml = yaml } }

// WithConfigFile runs the server on this config file, followed live
// (app.Options.ConfigFile): rewrite it and call App.Reload.
func WithConfigFile(path string) Option { return func(o *options) { o.file = path } }

// WithLogger sends the server's logs to l (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithClock runs the server on clock (a testutil.Clock the test steps),
// kept across Restart.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithNotify bounds webhook delivery (short backoff in tests); it holds
// across Restart.
func WithNotify(t notify.Tuning) Option { return func(o *options) { o.tune = t } }

// Start runs a server until the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := options{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, f := range opts {
		f(&o)
	}
	cfg := config.Demo()
	if o.yaml != "" {
		var err error
		if cfg, err = config.Parse([]byte(o.yaml)); err != nil {
			t.Fatalf("servertest: config: %v", err)
		}
	}
	if o.file != "" {
		var err error
		if cfg, err = config.Load(o.file); err != nil {
			t.Fatalf("servertest: config: %v", err)
		}
	}
	cfg.DataDir = t.TempDir()
	cfg.NATSListen = "127.0.0.1:0" // bus clients: App.Broker.ClientURL()
	s := &Server{Dir: cfg.DataDir, cfg: cfg, clock: o.clock, tune: o.tune, file: o.file, ln: o.ln}
	s.start(t, o.log, "127.0.0.1:0")
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start(t testing.TB, log *slog.Logger, addr string) {
	t.Helper()
	ln := s.ln
	s.ln = nil
	var err error
	for i := 0; ln == nil && i < 50; i++ { // the old listener's port may linger briefly
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("servertest: listen: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.New(ctx, app.Options{Config: s.cfg, Logger: log, Listener: ln, Clock: s.clock, Notify: s.tune, ConfigFile: s.file})
	if err != nil {
		t.Fatalf("servertest: new: %v", err)
	}
	rctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(rctx) }()
	select {
	case <-a.Started():
	case err := <-ran:
		stop()
		t.Fatalf("servertest: run stopped while starting: %v", err)
	case <-ctx.Done():
		stop()
		<-ran
		t.Fatalf("servertest: start: %v", ctx.Err())
	}
	s.App, s.stop, s.ran, s.addr, s.URL = a, stop, ran, ln.Addr().String(), "http://"+ln.Addr().String()
	s.cfg.Listen = s.addr
}

// Stop shuts the server down gracefully (its Run's ctx ends), keeping its
// data, and waits for Run to return. Safe to repeat.
func (s *Server) Stop() {
	if s.App == nil {
		return
	}
	s.stop()
	<-s.ran
	s.App = nil
}

// Restart stops the server and starts it again on the same data directory
// and the same address.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.start(t, slog.New(slog.NewTextHandler(io.Discard, nil)), s.addr)
}
