package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// Two processes run the deciders role against one NATS: each endpoint is
// delivered by one of them at a time (its lease), so every event arrives
// once.
func TestWebhookDeliveredOnceByTwoProcesses(t *testing.T) {
	t.Setenv("CS_TEST_HOOK_SECRET", hookSecret)
	rc := newReceiver(t, nil)
	url := startExternalNATS(t)
	var first *app.App
	for i := 0; i < 2; i++ {
		cfg, err := config.Parse([]byte(hookTenant("", "", hookLine(rc.srv.URL, "cloudevents", "request.created"))))
		if err != nil {
			t.Fatal(err)
		}
		cfg.NATSURL, cfg.Replicas = url, 1
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a, err := launch(context.Background(), app.Options{Config: cfg, Listener: ln, Notify: testTuning(t, rc),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_ = a.Shutdown(ctx)
		})
		if first == nil {
			first = a
		}
	}
	agent := newClient("http://"+first.Addr(), "hook-agent")
	var ids []string
	for i := 0; i < 5; i++ {
		var r record
		agent.do(t, "POST", "/v1/requests", refund(i), nil, &r)
		ids = append(ids, r.ID)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.events()) >= 5 }, "five events delivered")
	for _, id := range ids {
		if n := len(rc.of(id)); n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
}
