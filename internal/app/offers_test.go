package app_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// A deciders process that stops while a review is being offered leaves
// nothing behind on an external NATS (the work message was acked), yet the
// next deciders process to start offers the review again — even within
// the work stream's dedup window, which would drop a re-derived work
// message with the same Nats-Msg-Id.
func TestOffersResumeInANewDecidersProcess(t *testing.T) {
	url := startExternalNATS(t)
	api := startRole(t, url, "api")
	d1 := startRole(t, url, "deciders")
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var offers atomic.Int32
	if _, err := nc.QueueSubscribe(events.ReviewSubject("demo", "agt_programmer"), events.ReviewQueue, func(*nats.Msg) { offers.Add(1) }); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	var r record
	if code := newClient("http://"+api.Addr(), "dev-sub").do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return offers.Load() > 0 }, "the first process offers the review")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	before := offers.Load()
	startRole(t, url, "deciders")
	testutil.Eventually(t, 10*time.Second, func() bool { return offers.Load() > before }, "the new deciders process offers it again")
}
