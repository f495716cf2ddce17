package approvals_test

import (
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// The hub copies a record to the heap only to wake a waiter: the request
// mirror tells it every change, and a copy of each (640 bytes, garbage at
// once) would double a submit burst's record garbage and leave the spans
// of the records the mirror holds partly used. A waiter gets the record.
func TestHubObserveAllocatesOnlyForWaiters(t *testing.T) {
	h := approvals.NewHub(10)
	r := kvstate.Record{Request: events.Request{ID: "req_1", Tenant: "acme", Status: events.StatusPending}}
	done := r
	done.Status = events.StatusApproved
	if allocs := testing.AllocsPerRun(100, func() {
		h.Observe("acme.req_1", r, false)
		h.Observe("acme.req_1", done, false)
	}); allocs != 0 {
		t.Errorf("%v allocations per change nobody waits on; want 0", allocs)
	}
	ch, cancel, err := h.Subscribe("acme.req_1")
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	h.Observe("acme.req_1", done, false)
	if got := <-ch; got.ID != "req_1" || got.Status != events.StatusApproved {
		t.Errorf("the waiter got %s %s, want req_1 approved", got.ID, got.Status)
	}
}
