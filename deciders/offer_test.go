package deciders

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
)

// An offer stops when its request moves to a later revision or is
// removed, never when a lagging mirror delivers an older revision.
func TestOffersStopOnlyOnALaterRevision(t *testing.T) {
	tests := []struct {
		name    string
		rev     uint64
		status  domain.Status
		deleted bool
		stops   bool
	}{
		{"older revision (mirror lagging)", 1, domain.StatusPending, false, false},
		{"same revision", 2, domain.StatusPending, false, false},
		{"escalated", 3, domain.StatusPending, false, true},
		{"decided", 3, domain.StatusDenied, false, true},
		{"removed", 0, "", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stopped := false
			o := &Offers{loops: map[string]*offerLoop{"demo.req_1": {rev: 2, cancel: func() { stopped = true }}}}
			o.Observe("demo.req_1", kvstate.Record{Request: domain.Request{Revision: tt.rev, Status: tt.status}}, tt.deleted)
			if stopped != tt.stops {
				t.Fatalf("stopped = %v, want %v", stopped, tt.stops)
			}
		})
	}
}

// An offer nobody takes waits its TakeWait and its retry delay on the
// injected clock, not the wall's: with both an hour long, stepping the
// clock an hour brings the second offer at once.
func TestOffersGoByTheClock(t *testing.T) {
	store, views, _ := testutil.NewState(t, `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}]
`)
	nc := testutil.NewJetStream(t).JS.Conn()
	var got atomic.Int32
	sub, err := nc.QueueSubscribe(events.ReviewSubject("acme", "agt_a"), events.ReviewQueue, func(*nats.Msg) { got.Add(1) }) // never takes
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	clock := testutil.NewClock(time.Now())
	o, err := NewOffers(OffersConfig{Conn: nc, Views: views, Store: store, TakeWait: time.Hour, Retry: time.Hour, MaxRetry: 2 * time.Hour, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer o.Wait()
	defer cancel()
	r := &domain.Request{ID: domain.NewRequestID(), Tenant: "acme", Status: domain.StatusPending, Approver: &domain.Ref{Kind: domain.KindAgent, ID: "agt_a"}}
	o.Offer(ctx, r, "")
	testutil.Eventually(t, 10*time.Second, func() bool { return got.Load() == 1 }, "the first offer")
	clock.Advance(time.Hour) // the take wait passes, and the retry delay with it
	testutil.Eventually(t, 10*time.Second, func() bool { return got.Load() == 2 }, "the second offer, an hour later on the clock")
}
