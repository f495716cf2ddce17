package kvstate_test

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// The request mirror holds a pending request in full and a terminal one
// as its summary, whether it learnt of it from a write (Apply) or from the
// stored values at start; its indexes walk in id order from a cursor.
func TestRequestMirrorHoldsTerminalRequestsAsSummaries(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	var ids []events.RequestID
	for i := range 4 {
		r := pending(events.NewRequestID())
		if i%2 == 1 {
			r.Status = events.StatusDenied
			r.Decision = &events.Decision{Status: events.StatusDenied, By: events.Ref{Kind: events.KindPerson, ID: "u-1"}, DecidedAt: time.Now()}
		}
		if _, err := s.CreateRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	v := kvstate.NewViews(s, []*events.Tenant{{ID: "acme"}})
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = v.Run(rctx) }()
	if err := v.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for i, id := range ids {
			key := kvstate.RequestKey("acme", id)
			_, full := v.Requests().Get(key)
			sum, rev, held := v.Requests().Held(key)
			if !held || rev == 0 || full != (i%2 == 0) || sum.Agent != "agt_a" {
				t.Errorf("%s: request %d: full %v, held %v (%+v at %d)", when, i, full, held, sum, rev)
			}
		}
		if p := v.Pending("acme"); len(p) != 2 || p[0].ID != ids[0] || p[1].ID != ids[2] {
			t.Errorf("%s: pending %v", when, p)
		}
		var walked []events.RequestID
		v.ScanRequests("acme", kvstate.TenantScope("acme"), string(ids[0]), func(id events.RequestID, sum kvstate.Summary, _ uint64, r *kvstate.Record) bool {
			if (r == nil) != (sum.Status == string(events.StatusDenied)) {
				t.Errorf("%s: %s held wrongly: %+v, %v", when, id, sum, r != nil)
			}
			walked = append(walked, id)
			return true
		})
		if len(walked) != 3 || walked[0] != ids[1] || walked[2] != ids[3] {
			t.Errorf("%s: walked %v after %s, want %v", when, walked, ids[0], ids[1:])
		}
		var inbox []events.RequestID
		v.ScanRequests("acme", kvstate.InboxScope("acme", events.Ref{Kind: events.KindPerson, ID: "u-1"}), "", func(id events.RequestID, _ kvstate.Summary, _ uint64, _ *kvstate.Record) bool {
			inbox = append(inbox, id)
			return true
		})
		if len(inbox) != 4 {
			t.Errorf("%s: the person's inbox %v, want all 4", when, inbox)
		}
	}
	check("from the stored values")

	// A request ended by this process's own write goes to its summary.
	rec, err := s.Transition(ctx, "acme", ids[0], func(r *events.Request) (string, error) {
		r.Status = events.StatusDenied
		r.Decision = &events.Decision{Status: events.StatusDenied, By: events.Ref{Kind: events.KindPerson, ID: "u-1"}, DecidedAt: time.Now()}
		return events.TypeRequestDecided, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v.Requests().Apply(kvstate.RequestKey("acme", ids[0]), rec, rec.KVRevision)
	if _, full := v.Requests().Get(kvstate.RequestKey("acme", ids[0])); full {
		t.Error("a request just ended is still held in full")
	}
	if p := v.Pending("acme"); len(p) != 1 || p[0].ID != ids[2] {
		t.Errorf("pending after the end of one: %v", p)
	}
}
