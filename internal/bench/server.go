package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
)

type scenario func(ctx context.Context, o Options) (Result, error)

// withServer runs fn against o.URL, or against an in-process server on
// loopback in a temporary directory (the demo tenant, or yaml).
func withServer(ctx context.Context, o Options, cfg *config.Config, fn scenario) (Result, error) {
	if o.URL != "" {
		return fn(ctx, o)
	}
	a, dir, err := startLocal(ctx, cfg, o.NoAudit)
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = a.Shutdown(sctx)
	}()
	o.URL, o.NATSURL = "http://"+a.Addr(), a.Broker.ClientURL()
	res, err := fn(ctx, o)
	if res.Audit = "off"; err == nil && !o.NoAudit {
		err = measureAuditLag(ctx, a.Broker.JS, &res)
	}
	return res, err
}

func startLocal(ctx context.Context, cfg *config.Config, noAudit bool) (*app.App, string, error) {
	if cfg == nil {
		var err error
		if cfg, err = config.Parse([]byte(unthrottled(config.DemoYAML))); err != nil {
			return nil, "", err
		}
	}
	dir, err := os.MkdirTemp("", "countersign-bench-")
	if err != nil {
		return nil, "", err
	}
	cfg.DataDir, cfg.NATSListen = dir, "127.0.0.1:0" // bus scenarios connect here
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, dir, err
	}
	a, err := app.New(ctx, app.Options{Config: cfg, Listener: ln, NoAudit: noAudit, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, dir, err
	}
	ran := make(chan error, 1)
	go func() { ran <- a.Run(context.WithoutCancel(ctx)) }() // until withServer's Shutdown
	select {
	case <-a.Started():
		return a, dir, nil
	case err := <-ran:
		return nil, dir, errors.Join(errors.New("app: stopped while starting"), err)
	}
}

// unthrottled lifts the quotas (SPEC §5) of the demo tenant in yaml: a
// load test submits from one token far faster than an agent may.
func unthrottled(yaml string) string {
	const lift = "    max_pending: 100000000\n    submit_rate: 100000000\n    submit_burst: 100000000\n"
	return strings.Replace(yaml, "  - id: demo\n", "  - id: demo\n"+lift, 1)
}
