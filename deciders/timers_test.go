package deciders_test

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testutil"
	"github.com/countersign/countersign/kvstate"
)

// Timers arm one timer per pending request on their clock, and none once
// Run has returned: every armed timer is stopped then.
func TestTimersStopWhenRunReturns(t *testing.T) {
	f := newFixture(t)
	clock := testutil.NewClock(time.Now())
	tm := &deciders.Timers{Views: f.views, Clock: clock}
	pending := func(id string) kvstate.Record {
		r := req("prog", "tools.call", "deploy", "", "tool")
		r.ID, r.Status, r.DeadlineAt = events.RequestID(id), events.StatusPending, clock.Now().Add(time.Hour)
		r.Approver = &events.Ref{Kind: events.KindPerson, ID: "u-1"}
		return kvstate.Record{Request: *r}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tm.Run(ctx) }()
	tm.Observe("acme.req_a", pending("req_a"), false)
	tm.Observe("acme.req_b", pending("req_b"), false)
	if n := clock.Waiting(); n != 2 {
		t.Fatalf("%d timers armed for two pending requests, want 2", n)
	}
	cancel()
	<-done
	if n := clock.Waiting(); n != 0 {
		t.Errorf("%d timers still armed after Run returned", n)
	}
	tm.Observe("acme.req_c", pending("req_c"), false)
	if n := clock.Waiting(); n != 0 {
		t.Errorf("a timer armed after Run returned")
	}
}
