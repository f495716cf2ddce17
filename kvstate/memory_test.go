package kvstate_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A pending request in the request mirror costs at most about its stored size
// (SPEC §5 "Quotas"): the mirror holds the record once, not its stored
// bytes beside it, even when its writer applies it with them.
func TestPendingHeldOnce(t *testing.T) {
	_, views, _ := testutil.NewState(t, "tenants:\n  - id: acme\n    members: [{id: u-1}]\n    agents: [{id: a, member: u-1}]\n")
	const n = 32
	now := time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC)
	base := liveHeap()
	stored := 0
	for i := range n {
		r := domain.Request{ID: domain.NewRequestID(), Tenant: "acme", Agent: "a", Status: domain.StatusPending, Tool: "deploy",
			Capability: domain.Capability{Action: domain.ActionToolsCall, Target: "deploy"}, CreatedAt: now, DeadlineAt: now.Add(time.Hour),
			Arguments: json.RawMessage(`{"blob":"` + strings.Repeat("x", 1<<20) + `"}`)}
		raw, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		stored += len(raw)
		views.Requests().Apply(kvstate.RequestKey(r.Tenant, r.ID), kvstate.WithStored(kvstate.Record{Request: r}, raw), uint64(i+1))
	}
	held := liveHeap() - base
	if got := views.PendingOf("acme", "a"); got != n {
		t.Fatalf("pending of a = %d, want %d", got, n)
	}
	if ratio := float64(held) / float64(stored); ratio > 1.5 {
		t.Errorf("the mirror holds %d bytes for %d stored: %.2f× (want about 1×, at most 1.5×)", held, stored, ratio)
	}
}
