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

// Two processes run the deciders role against one NATS: a tenant's email
// is sent by one of them at a time (its lease), so each request reaches
// Ada once and each reminder goes once.
func TestEmailSentOnceByTwoProcesses(t *testing.T) {
	t.Setenv("CS_TEST_LINK_SECRET", "the decision links' test key")
	t.Setenv("CS_TEST_MAIL_USER", mailUser)
	t.Setenv("CS_TEST_MAIL_PASS", mailPass)
	mb := newMailbox(t, true)
	clock := testutil.NewClock(time.Now())
	url := startExternalNATS(t)
	var first *app.App
	for i := 0; i < 2; i++ {
		cfg, err := config.Parse([]byte(mailYAML("https://approvals.example.com", mb.addr, "", withCredentials)))
		if err != nil {
			t.Fatal(err)
		}
		cfg.NATSURL, cfg.Replicas = url, 1
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a, err := launch(context.Background(), app.Options{Config: cfg, Listener: ln, Notify: mb.tuning(), Clock: clock,
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
	agent := newClient("http://"+first.Addr(), "mail-agent")
	var ids []string
	for i := 0; i < 5; i++ {
		var r record
		if code := agent.do(t, "POST", "/v1/requests", refund(i), nil, &r); code != 201 {
			t.Fatalf("submit: %d", code)
		}
		ids = append(ids, r.ID)
	}
	testutil.Eventually(t, 15*time.Second, func() bool { return len(mb.messages()) >= 5 }, "five messages")
	clock.Set(time.Now().Add(31 * time.Minute)) // past half of the hour each request has
	testutil.Eventually(t, 15*time.Second, func() bool { return len(mb.messages()) >= 10 }, "five reminders")
	var barrier record
	agent.do(t, "POST", "/v1/requests", refund(9), nil, &barrier)
	testutil.Eventually(t, 15*time.Second, func() bool { return len(mailAbout(mb.to(t, "ada@example.com"), barrier.ID)) >= 1 }, "a later message")
	for _, id := range ids {
		if n := len(mailAbout(mb.to(t, "ada@example.com"), id)); n != 2 {
			t.Errorf("%s: %d messages, want 2 (the request and its reminder)", id, n)
		}
	}
	if n := len(mailAbout(mb.to(t, "ada@example.com"), barrier.ID)); n != 1 {
		t.Errorf("the later request: %d messages, want 1", n)
	}
}
