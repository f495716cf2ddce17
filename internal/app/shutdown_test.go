package app_test

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
)

// SIGTERM stops the server gracefully: a held long-poll is answered at
// once with the still-pending record (never a decision), and the process
// exits 0; the request is still pending after a restart.
func TestGracefulShutdownOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	bin, dir, addr := buildBinary(t), t.TempDir(), freeAddr(t)
	cmd := startProcess(t, bin, dir, addr)
	url := "http://" + addr
	main := newClient(url, "dev-main")
	var r record
	if code := main.do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	polled := make(chan record, 1)
	go func() {
		var got record
		if code := main.do(t, "GET", "/v1/requests/"+r.ID+"?wait=60s", nil, nil, &got); code != http.StatusOK {
			t.Errorf("held poll: status %d", code)
		}
		polled <- got
	}()
	testutil.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(metricsText(t, url), "countersign_longpolls_waiting 1")
	}, "the poll is held")
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-polled:
		if got.Status != "pending" || got.Decision != nil {
			t.Fatalf("held poll answered %+v, want the pending record", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the held poll was not answered at shutdown")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	startProcess(t, bin, dir, addr)
	var again record
	main.do(t, "GET", "/v1/requests/"+r.ID, nil, nil, &again)
	if again.Status != "pending" {
		t.Fatalf("after restart: %s, want pending", again.Status)
	}
}
