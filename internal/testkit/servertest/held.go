package servertest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// SSE is a held GET /v1/events: each event's data line arrives on Data,
// which is closed when the server ends the stream.
type SSE struct {
	Data <-chan string
}

// HoldSSE sends req (a GET /v1/events, its credential set) with client and
// returns once the stream is open; the stream is read until it ends or the
// test does.
func HoldSSE(t testing.TB, client *http.Client, req *http.Request) *SSE {
	t.Helper()
	ctx, cancel := context.WithCancel(req.Context())
	t.Cleanup(cancel)
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("GET /v1/events: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET /v1/events: %d %s", resp.StatusCode, raw)
	}
	data := make(chan string, 64)
	go func() {
		defer close(data)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data <- d
			}
		}
	}()
	return &SSE{Data: data}
}

// Answer is how a held request ended: its status and body.
type Answer struct {
	Status int
	Body   string
	Err    error
}

// HoldRequest sends req (a long-poll) with client on its own goroutine;
// its answer arrives on the channel.
func HoldRequest(t testing.TB, client *http.Client, req *http.Request) <-chan Answer {
	t.Helper()
	ctx, cancel := context.WithCancel(req.Context())
	t.Cleanup(cancel)
	out := make(chan Answer, 1)
	go func() {
		resp, err := client.Do(req.WithContext(ctx))
		if err != nil {
			out <- Answer{Err: err}
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		out <- Answer{Status: resp.StatusCode, Body: string(raw), Err: err}
	}()
	return out
}

// HoldRPC connects to /v1/rpc as token and reads until the server closes
// the connection; the close code arrives on the channel (-1: no close
// frame).
func (a API) HoldRPC(token string) <-chan websocket.StatusCode {
	a.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(a.URL, "http")+"/v1/rpc",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		a.T.Fatalf("dial /v1/rpc: %v", err)
	}
	c.SetReadLimit(64 << 20)
	a.T.Cleanup(func() { _ = c.CloseNow() })
	out := make(chan websocket.StatusCode, 1)
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				out <- websocket.CloseStatus(err)
				return
			}
		}
	}()
	return out
}
