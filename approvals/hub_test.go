package approvals_test

import (
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// The hub copies a record to the heap only to wake a waiter: the request
// mirror tells it every change, and a copy of each (640 bytes, garbage at
// once) would double a submit burst's record garbage and leave the spans
// of the records the mirror holds partly used. A waiter gets the record.
func TestHubObserveAllocatesOnlyForWaiters(t *testing.T) {
	h := approvals.NewHub(10)
	r := kvstate.Record{Request: domain.Request{ID: "req_1", Tenant: "acme", Status: domain.StatusPending}}
	done := r
	done.Status = domain.StatusApproved
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
	if got := <-ch; got.ID != "req_1" || got.Status != domain.StatusApproved {
		t.Errorf("the waiter got %s %s, want req_1 approved", got.ID, got.Status)
	}
}

// A terminal record wakes every waiter of its key and no other; a
// cancelled waiter is not counted and not woken; Close wakes the rest.
func TestHubWakesTheKeysWaitersOnly(t *testing.T) {
	h := approvals.NewHub(3)
	done := kvstate.Record{Request: domain.Request{ID: "req_1", Tenant: "acme", Status: domain.StatusApproved}}
	a, cancelA, _ := h.Subscribe("acme.req_1")
	b, cancelB, _ := h.Subscribe("acme.req_1")
	c, cancelC, _ := h.Subscribe("acme.req_1")
	if _, _, err := h.Subscribe("acme.req_2"); err == nil {
		t.Fatal("a fourth wait in a hub of 3: want ErrRateLimited")
	}
	cancelB()
	cancelB() // twice: once only counted
	if n := h.Waiting(); n != 2 {
		t.Fatalf("waiting %d, want 2", n)
	}
	other, cancelOther, err := h.Subscribe("acme.req_2")
	if err != nil {
		t.Fatal(err)
	}
	defer cancelOther()
	h.Observe("acme.req_1", done, false)
	for name, ch := range map[string]<-chan *kvstate.Record{"first": a, "third": c} {
		select {
		case r := <-ch:
			if r.ID != "req_1" {
				t.Errorf("%s waiter got %s", name, r.ID)
			}
		default:
			t.Errorf("the %s waiter of req_1 was not woken", name)
		}
	}
	select {
	case <-b:
		t.Error("a cancelled waiter was woken")
	case <-other:
		t.Error("req_2's waiter was woken by req_1")
	default:
	}
	cancelA()
	cancelC()
	if n := h.Waiting(); n != 1 {
		t.Fatalf("waiting %d, want 1", n)
	}
	h.Close()
	if _, ok := <-other; ok {
		t.Error("Close left a waiter open")
	}
}

// What a held poll costs the hub: its channel, its cancel and its slot.
//
//	go test -run '^$' -bench HubSubscribe -benchmem ./approvals/
func BenchmarkHubSubscribe(b *testing.B) {
	h := approvals.NewHub(1 << 20)
	done := kvstate.Record{Request: domain.Request{ID: "req_1", Tenant: "acme", Status: domain.StatusApproved}}
	b.ReportAllocs()
	for b.Loop() {
		ch, cancel, _ := h.Subscribe("acme.req_1")
		h.Observe("acme.req_1", done, false)
		<-ch
		cancel()
	}
}
