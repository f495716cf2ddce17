package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/broker"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// NewJetStream starts an embedded nats-server with JetStream (the
// production options: SyncAlways, in-process connection) in a temporary
// directory, closed when the test ends.
func NewJetStream(t testing.TB) *broker.Broker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := broker.Start(ctx, broker.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("testutil: start JetStream: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// Eventually polls cond every 10ms until it holds or timeout passes, then
// fails the test with msg.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", timeout, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// NewState opens the KV state on a fresh JetStream and runs its views for
// the tenants of the config yaml, until the test ends. It returns the
// store, the ready views and the tenants.
func NewState(t testing.TB, yaml string) (*kvstate.Store, *views.Views, []*domain.Tenant) {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("testutil: config: %v", err)
	}
	tenants, err := cfg.DomainTenants()
	if err != nil {
		t.Fatalf("testutil: tenants: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	store, err := kvstate.Open(ctx, kvstate.Config{JS: NewJetStream(t).JS, Replicas: 1})
	if err != nil {
		t.Fatalf("testutil: open the state: %v", err)
	}
	views, err := views.New(views.Config{Store: store, Tenants: tenants})
	if err != nil {
		t.Fatalf("testutil: views: %v", err)
	}
	go func() { _ = views.Run(ctx) }()
	if err := views.WaitReady(ctx); err != nil {
		t.Fatalf("testutil: views: %v", err)
	}
	return store, views, tenants
}
