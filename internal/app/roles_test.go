package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats-server/v2/server"
)

// startExternalNATS runs a standalone nats-server with JetStream on a
// loopback port, as an external cluster would be.
func startExternalNATS(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		SyncAlways: true, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

func startRole(t *testing.T, natsURL string, roles ...string) *app.App {
	t.Helper()
	return startRoleWith(t, natsURL, func(*config.Config) {}, roles...)
}

// The same binary scales out against external NATS: two API processes and
// a deciders process share the state. A request submitted on one API is
// answered on the other, the first one's long-poll wakes, and only the
// deciders process expires requests.
func TestRolesShareExternalNATS(t *testing.T) {
	url := startExternalNATS(t)
	api1, api2 := startRole(t, url, "api"), startRole(t, url, "api")
	startRole(t, url, "deciders")
	main1 := newClient("http://"+api1.Addr(), "dev-main")
	person2 := newClient("http://"+api2.Addr(), "dev-person")

	var r record
	if code := main1.do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
		t.Fatalf("submit on api1: %d", code)
	}
	woke := make(chan record, 1)
	go func() {
		var got record
		main1.do(t, "GET", "/v1/requests/"+r.ID+"?wait=30s", nil, nil, &got)
		woke <- got
	}()
	testutil.Eventually(t, 10*time.Second, func() bool { return api1.Service.Hub().Waiting() == 1 }, "the poll is held on api1")
	if code := person2.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow"}, nil, nil); code != 200 {
		t.Fatalf("answer on api2: %d", code)
	}
	select {
	case got := <-woke:
		if got.Status != "approved" {
			t.Fatalf("api1's poll woke with %s", got.Status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("api1's long-poll did not wake on api2's answer")
	}

	short := refund(2)
	short["timeout"] = "1s"
	var s record
	main1.do(t, "POST", "/v1/requests", short, nil, &s)
	testutil.Eventually(t, 10*time.Second, func() bool {
		var got record
		main1.do(t, "GET", "/v1/requests/"+s.ID, nil, nil, &got)
		return got.Status == "expired" && got.Decision != nil && got.Decision.By.Kind == "deadline"
	}, "the deciders process expires the request")
}

// nats_url with replicas left at its default (3, SPEC §9) against one
// standalone nats-server: start fails at once, naming the setting, instead
// of retrying in silence with no HTTP listener.
func TestStartOnAStandaloneServerNamesReplicas(t *testing.T) {
	url := startExternalNATS(t)
	cfg, err := config.Parse([]byte(config.DemoYAML))
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATSURL = url
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, err := launch(ctx, app.Options{Config: cfg, Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		_ = a.Shutdown(context.Background())
		t.Fatal("started with 3 replicas on a standalone server")
	}
	if ctx.Err() != nil {
		t.Fatalf("start retried until its deadline: %v", err)
	}
	if !strings.Contains(err.Error(), "replicas is 3") || !strings.Contains(err.Error(), "set replicas: 1") {
		t.Fatalf("start error does not name the setting: %v", err)
	}
}
