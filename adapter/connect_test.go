package adapter_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// closedAddr is an http:// address where nothing listens any more.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close()
	return addr
}

// TestDoRefusedConnectionFailsFast: with nothing listening, a submit is
// retried on the connect schedule and then given up, long before the wait
// limit or the unreachable limit: the harness is not held.
func TestDoRefusedConnectionFailsFast(t *testing.T) {
	t.Parallel()
	c := newClient(t, closedAddr(t), tokMain, adapter.WithWaitLimit(10*time.Minute),
		adapter.WithUnreachableLimit(time.Minute),
		adapter.WithConnectRetries(10*time.Millisecond, 20*time.Millisecond, 40*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	var runs counter
	out, _ := c.Do(ctx, call("read_invoice"), runs.run)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Do took %v against a closed port, want the connect schedule (70ms)", took)
	}
	if out.Kind != adapter.NotObtained || !errors.Is(out.Err, adapter.ErrUnreachable) || runs.count() != 0 {
		t.Fatalf("got %s (%v), %d runs; want not obtained with ErrUnreachable", out.Kind, out.Err, runs.count())
	}
	if s := out.String(); !strings.Contains(s, "countersign could not be reached") || !strings.Contains(s, "nobody denied") {
		t.Errorf("wording %q, want it to say countersign could not be reached and nobody denied", s)
	}
}

// TestDoSlowServerIsWaitedFor: a server that accepted the connection is
// not refused; a slow answer is waited for past the connect schedule.
func TestDoSlowServerIsWaitedFor(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	p := newFaultProxy(t, srv.URL)
	p.inject(fault{delayRequest: 500 * time.Millisecond})
	c := newClient(t, p.URL(), tokMain, adapter.WithConnectRetries(10*time.Millisecond))
	var runs counter
	out, _ := c.Do(context.Background(), call("read_invoice"), runs.run)
	if out.Kind != adapter.Ran || runs.count() != 1 {
		t.Fatalf("got %s (%v), %d runs; want ran once", out.Kind, out.Err, runs.count())
	}
}
