package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/broker"
	"github.com/countersign/countersign/internal/gcpace"
)

// gcHeadroom is the collector's headroom over the live heap
// (internal/gcpace), unless GOGC or GOMEMLIMIT is set.
const gcHeadroom = 128 << 20

// defaultConfigFile is read when present and --config is not given.
const defaultConfigFile = "countersign.yaml"

// serveArgs are serve's flags.
type serveArgs struct {
	file, listen, data, natsURL, natsListen, roles, pprof *string
}

func serveFlagSet() (*flag.FlagSet, serveArgs) {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	return fl, serveArgs{
		file:       fl.String("config", "", "config file (default ./countersign.yaml if present, else the demo tenant)"),
		listen:     fl.String("listen", "", "HTTP listen address (default 127.0.0.1:8080; taken by something else: pick another)"),
		data:       fl.String("data", "", "data directory for the embedded NATS server (default ./data; remove it for a fresh start)"),
		natsURL:    fl.String("nats-url", "", "external NATS servers, comma-separated (default: embedded)"),
		natsListen: fl.String("nats-listen", "", "embedded NATS client address, or off (default 127.0.0.1:4222)"),
		roles:      fl.String("roles", "", "roles to run: api,deciders (default both)"),
		pprof:      fl.String("pprof", "", "serve net/http/pprof on this loopback address (default off)"),
	}
}

func runServe(args []string) int {
	fl, f := serveFlagSet()
	file, listen, data, natsURL, natsListen, roles, pprofAddr := f.file, f.listen, f.data, f.natsURL, f.natsListen, f.roles, f.pprof
	if err := fl.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *pprofAddr != "" {
		addr, err := servePprof(*pprofAddr, log)
		if err != nil {
			log.Error("pprof", "err", err)
			return 2
		}
		log.Info("pprof on http://" + addr + "/debug/pprof/")
	}
	cfg, demo, notes, err := serveConfig(*file, serveFlags{listen: *listen, data: *data, natsURL: *natsURL, natsListen: *natsListen, roles: *roles})
	if err != nil {
		log.Error("config", "err", err)
		return 1
	}
	for _, n := range notes {
		log.Info("demo: " + n)
	}
	path := ""
	if !demo {
		path = cmp.Or(*file, defaultConfigFile)
	}
	return serve(cfg, path, log)
}

// serveFlags are serve's flags that override the file.
type serveFlags struct{ listen, data, natsURL, natsListen, roles string }

// serveConfig is the config serve starts with: the file (or the demo),
// the flags over it, and app.Check's verdict on the result, the
// validation `config check` runs. notes are the demo's lines to log.
func serveConfig(file string, f serveFlags) (cfg *config.Config, demo bool, notes []string, err error) {
	if cfg, demo, err = loadConfig(file); err != nil {
		return nil, false, nil, err
	}
	override(cfg, f.listen, f.data, f.natsURL, f.roles)
	if f.natsListen != "" {
		cfg.NATSListen = f.natsListen
	}
	if demo {
		notes = demoNotify(cfg)
	}
	return cfg, demo, notes, app.Check(cfg)
}

func loadConfig(file string) (*config.Config, bool, error) {
	if file != "" {
		c, err := config.Load(file)
		return c, false, err
	}
	c, err := config.Load(defaultConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		return config.Demo(), true, nil
	}
	return c, false, err
}

func override(c *config.Config, listen, data, natsURL, roles string) {
	if listen != "" {
		c.Listen = listen
	}
	if data != "" {
		c.DataDir = data
	}
	if natsURL != "" {
		c.NATSURL = natsURL
	}
	if roles != "" {
		c.Roles = strings.Split(roles, ",")
	}
}

func serve(cfg *config.Config, path string, log *slog.Logger) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	gcpace.Pace(gcHeadroom, 250*time.Millisecond) // through the stop too
	if cfg.PlainTokens() {
		log.Warn("config holds plain tokens: for development only; use token_sha256 in production")
	}
	hup := make(chan os.Signal, 1) // before the start: a SIGHUP must never stop the process
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	log.Info("starting", "listen", cfg.Listen, "nats_listen", natsListenText(cfg))
	a, err := app.New(ctx, app.Options{Config: cfg, Logger: log, ConfigFile: path})
	if err != nil {
		if ctx.Err() != nil {
			log.Info("stopped while starting: a signal asked", "err", err)
			return 0
		}
		log.Error("start", "err", err)
		if hint := portHint(err); hint != "" {
			fmt.Fprintln(os.Stderr, "countersign serve: "+hint)
		}
		return 1
	}
	go announce(ctx, a, cfg, path, hup, log)
	if err := a.Run(ctx); err != nil {
		log.Error("stopped", "err", err)
		return 1
	}
	return 0
}

// announce logs where the process listens once it serves, then stores the
// config file as the next revision on each SIGHUP until ctx ends.
func announce(ctx context.Context, a *app.App, cfg *config.Config, path string, hup <-chan os.Signal, log *slog.Logger) {
	select {
	case <-a.Started():
	case <-ctx.Done():
		return
	}
	if path == "" {
		printDemo(os.Stderr, cfg)
	}
	if u := a.Broker.ClientURL(); u != "" {
		log.Info("nats listening on " + u)
	}
	if a.Addr() != "" {
		log.Info("listening on " + a.Addr())
	} else {
		log.Info("running without the api role", "roles", strings.Join(cfg.Roles, ","))
	}
	reloadOnHangup(ctx, hup, a)
}

// portHint says which flag picks another port when a port serve is to
// listen on is taken ("" for any other error).
func portHint(err error) string {
	var pt *broker.PortTakenError
	if !errors.As(err, &pt) {
		return ""
	}
	switch pt.What {
	case "nats":
		return fmt.Sprintf("the embedded NATS port %s is taken by another process: pick another with --nats-listen 127.0.0.1:4223 (or nats_listen: in the config; off: no NATS port, HTTP only)", pt.Addr)
	default:
		return fmt.Sprintf("the HTTP port %s is taken by another process: pick another with --listen 127.0.0.1:8081 (or listen: in the config), and point the CLI at it with --url or COUNTERSIGN_URL", pt.Addr)
	}
}

func natsListenText(cfg *config.Config) string {
	switch {
	case cfg.NATSURL != "":
		return "external"
	case cfg.NATSListen == "":
		return "off"
	}
	return cfg.NATSListen
}

// reloadOnHangup stores the config file as the next revision on each
// SIGHUP, until ctx ends (a file that does not load is logged there).
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, a *app.App) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			_ = a.Reload(ctx)
		}
	}
}

// printDemo prints the demo tenant's principals and tokens, from the demo
// config itself.
func printDemo(w io.Writer, cfg *config.Config) {
	t := cfg.Tenants[0]
	fmt.Fprintf(w, "countersign demo tenant %q (no countersign.yaml found):\n", t.ID)
	parents := map[string]string{}
	for _, a := range t.Agents {
		parents["agent:"+a.ID] = a.Parent
	}
	for _, tok := range t.Tokens {
		line := fmt.Sprintf("  %-26s token %-15s %s", tok.Principal, tok.Token, strings.Join(tok.Scopes, ", "))
		if p := parents[tok.Principal]; p != "" {
			line += "  (works for " + p + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "  reads: %s  |  these tokens are for development only\n", strings.Join(t.ReadRules, ", "))
}
