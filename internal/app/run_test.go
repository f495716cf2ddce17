package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// demoConfig is the demo tenant on a fresh data directory, with no NATS
// port (never the demo's fixed 4222: a serve may run beside the tests).
func demoConfig(t *testing.T) *config.Config {
	cfg := config.Demo()
	cfg.DataDir, cfg.NATSListen = t.TempDir(), "off"
	return cfg
}

func newApp(t *testing.T, cfg *config.Config) *App {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := New(ctx, Options{Config: cfg, Logger: quiet(), Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Run starts the workers New built: a submit is answered while it runs.
// When its ctx ends it returns nil, and every goroutine the process
// started (NATS, the workers, the HTTP server) has ended.
func TestRunReturnsWhenCtxEnds(t *testing.T) {
	before := runtime.NumGoroutine()
	a := newApp(t, demoConfig(t))
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	select {
	case <-a.Started():
	case err := <-ran:
		t.Fatalf("Run stopped while starting: %v", err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("POST", "http://"+a.Addr()+"/v1/requests",
		strings.NewReader(`{"tool":"issue_refund","arguments":{"payment_id":1,"amount":4900,"currency":"GBP"},"timeout":"1h"}`))
	req.Header.Set("Authorization", "Bearer dev-main")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("submit while running: status %d, want 201", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run after ctx ended = %v, want nil", err)
		}
	case <-time.After(45 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
	if c, err := net.Dial("tcp", a.Addr()); err == nil {
		c.Close()
		t.Error("the listener still accepts after Run returned")
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return runtime.NumGoroutine() <= before },
		"the process's goroutines end after Run returned")
}

// A worker that fails makes Run return its error, and Run shuts the
// process down; a Run whose ctx has already ended returns nil.
func TestRunReturnsWhenAWorkerDies(t *testing.T) {
	a := newApp(t, demoConfig(t))
	died := errors.New("the watcher died")
	a.workers = append(a.workers, func(context.Context) error { return died })
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second) // a bound only: Run returns at once
	defer cancel()
	if err := a.Run(ctx); !errors.Is(err, died) {
		t.Fatalf("Run = %v, want the worker's error", err)
	}
	if c, err := net.Dial("tcp", a.Addr()); err == nil {
		c.Close()
		t.Error("the listener still accepts after Run returned")
	}

	b := newApp(t, demoConfig(t))
	stopped, stop := context.WithCancel(context.Background())
	stop()
	if err := b.Run(stopped); err != nil {
		t.Fatalf("Run after ctx ended = %v, want nil", err)
	}
}

// New refuses a config Check refuses, naming the key at fault, before it
// starts anything: no goroutine, no NATS data, the HTTP port not taken.
func TestNewRefusesBadConfigBeforeAnything(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := demoConfig(t)
	cfg.Listen = addr
	cfg.AuditSigningKeyEnv = "COUNTERSIGN_TEST_UNSET_AUDIT_KEY"
	before := runtime.NumGoroutine()
	_, err = New(context.Background(), Options{Config: cfg, Logger: quiet()})
	if err == nil || !strings.Contains(err.Error(), "audit_signing_key_env") {
		t.Fatalf("New = %v, want a refusal naming audit_signing_key_env", err)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines %d after the refusal, %d before: New started something", n, before)
	}
	if entries, _ := os.ReadDir(cfg.DataDir); len(entries) > 0 {
		t.Errorf("data directory holds %d entries after the refusal: NATS started", len(entries))
	}
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the HTTP port is still taken after the refusal: %v", err)
	}
	again.Close()
}

// An App that New built and nobody ran holds NATS and the port until
// Shutdown, which releases both; a Run after it refuses to start.
func TestShutdownWithoutRun(t *testing.T) {
	before := runtime.NumGoroutine()
	a := newApp(t, demoConfig(t))
	if err := a.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown = %v, want nil", err)
	}
	if err := a.Run(context.Background()); err == nil {
		t.Error("Run after Shutdown = nil, want a refusal")
	}
	if c, err := net.Dial("tcp", a.Addr()); err == nil {
		c.Close()
		t.Error("the listener still accepts after Shutdown")
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return runtime.NumGoroutine() <= before },
		"NATS's goroutines end after Shutdown")
}

// /readyz says ready only once the start has finished: the HTTP listener
// serves while the start still sets up the bus, and a process that is
// still starting (or whose start then fails) is not ready.
func TestNotReadyWhileStarting(t *testing.T) {
	if err := (&App{}).ready(context.Background()); !errors.Is(err, errStarting) {
		t.Fatalf("ready before the start finished = %v, want errStarting", err)
	}
}
