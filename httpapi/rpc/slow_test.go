package rpc_test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/countersign/countersign/httpapi/rpc"
)

// TestStalledReaderDropped: a client that stops reading is dropped once
// its send queue is full, and another client keeps receiving meanwhile
// and after. The handler runs on the server's own service with a queue
// of 16 (one notification per change: the reader keeps up), on a
// listener whose sockets have small buffers, so that a stall shows
// quickly.
func TestStalledReaderDropped(t *testing.T) {
	t.Parallel()
	s := start(t)
	handler, err := rpc.New(rpc.Config{Service: s.App.Service, SendQueue: 16, WriteTimeout: time.Minute,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := httptest.NewUnstartedServer(handler)
	h.Listener = smallBuffers{h.Listener}
	h.Start()
	t.Cleanup(h.Close)
	stalled, reader := dial(t, h.URL, tokPerson), dial(t, h.URL, tokPerson)
	stalled.subscribe(map[string]any{"sessionIds": []string{"ses-big"}})
	reader.subscribe(map[string]any{"sessionIds": []string{"ses-big"}})
	big := strings.Repeat("x", 64<<10)
	for i := 0; i < 48; i++ { // 48 x 64 KiB: more than the queue and the buffers hold
		id := submit(t, s, tokMain, map[string]any{"tool": "t", "session": "ses-big", "arguments": map[string]any{"blob": big, "i": i}})["id"].(string)
		reader.expect("approval/requested", id)
	}
	closed := make(chan error, 1)
	go func() { // drain what the stalled client was sent: it ends in a close
		for {
			if _, err := stalled.tryRead(20 * time.Second); err != nil {
				closed <- err
				return
			}
		}
	}()
	err = <-closed
	if st := websocket.CloseStatus(err); st != websocket.StatusTryAgainLater && st != -1 {
		t.Errorf("stalled client closed with %d (%v)", st, err)
	}
	if strings.Contains(err.Error(), "deadline") {
		t.Fatalf("the stalled client was never dropped: %v", err)
	}
	after := submit(t, s, tokMain, map[string]any{"tool": "after", "session": "ses-big"})["id"].(string)
	reader.expect("approval/requested", after)
}

// smallBuffers gives each accepted connection small socket buffers.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
		_ = tc.SetReadBuffer(4096)
	}
	return c, err
}

// New refuses a config without the Service: ErrConfig, not a panic.
func TestNewValidates(t *testing.T) {
	if _, err := rpc.New(rpc.Config{}); !errors.Is(err, rpc.ErrConfig) {
		t.Fatalf("New without the Service: %v, want ErrConfig", err)
	}
}
