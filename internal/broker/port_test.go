package broker

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// A client port in use by something else is refused before the server
// starts, with the address named (never a 30 s wait for readiness).
func TestEmbeddedPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	_, err = Start(context.Background(), Config{DataDir: t.TempDir(), Listen: ln.Addr().String()})
	var pt *PortTakenError
	if !errors.As(err, &pt) || pt.What != "nats" || pt.Addr != ln.Addr().String() {
		t.Fatalf("Start on a taken port: %v, want a PortTakenError naming %s", err, ln.Addr())
	}
	t.Logf("refused after %v: %v", time.Since(start), err)
}

// A server that never becomes ready (its port taken after the check)
// is waited for only until ctx ends: a signal while starting stops it.
func TestWaitReadyEndsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	opts := EmbeddedOptions(t.TempDir())
	opts.DontListen, opts.Host = false, "127.0.0.1"
	opts.Port = ln.Addr().(*net.TCPAddr).Port
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { done <- waitReady(ctx, s) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("waitReady: %v, want the context's end", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waitReady ignored the context's end")
	}
}
