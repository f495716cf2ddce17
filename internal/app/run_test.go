package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
)

// A worker that dies makes Run return its error, and Run shuts the
// process down (the listener closes); a Run whose ctx ends returns nil.
func TestRunReturnsWhenAWorkerDies(t *testing.T) {
	start := func() *App {
		t.Helper()
		cfg := config.Demo()
		cfg.DataDir, cfg.NATSListen = t.TempDir(), "off" // never the demo's fixed 4222: a serve may run beside the tests
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		a, err := Start(ctx, Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listener: ln})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := start()
	died := errors.New("the watcher died")
	a.workers.Go(func() error { return died })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound only: Run returns at once
	defer cancel()
	if err := a.Run(ctx); !errors.Is(err, died) {
		t.Fatalf("Run = %v, want the worker's error", err)
	}
	if c, err := net.Dial("tcp", a.Addr()); err == nil {
		c.Close()
		t.Error("the listener still accepts after Run returned")
	}

	b := start()
	stopped, stop := context.WithCancel(context.Background())
	stop()
	if err := b.Run(stopped); err != nil {
		t.Fatalf("Run after ctx ended = %v, want nil", err)
	}
}

// /readyz says ready only once the start has finished: the HTTP listener
// serves while the start still sets up the bus, and a process that is
// still starting (or whose start then fails) is not ready.
func TestNotReadyWhileStarting(t *testing.T) {
	if err := (&App{}).ready(context.Background()); !errors.Is(err, errStarting) {
		t.Fatalf("ready before the start finished = %v, want errStarting", err)
	}
}
