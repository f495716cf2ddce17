package testutil

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/broker"
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
