package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// writeRecord writes a record the caller just stored from its stored
// bytes, and keeps the caller's record on its stack: a submit that
// answers with its new record puts no copy of it (640 bytes) on the heap.
func TestWriteRecordKeepsTheRecordOnTheStack(t *testing.T) {
	store, _, _ := testutil.NewState(t, "tenants: [{id: acme}]\n")
	stored, err := store.CreateRequest(context.Background(), &domain.Request{ID: domain.NewRequestID(), Tenant: "acme",
		Agent: "agt_main", Tool: "deploy", Status: domain.StatusPending, CreatedAt: time.Now(), DeadlineAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Stored() == nil {
		t.Fatal("a record just stored has no stored bytes")
	}
	var w discard
	held := &stored // on the heap already: writeRecord's own allocations
	base := testing.AllocsPerRun(100, func() { _ = writeRecord(&w, http.StatusCreated, held) })
	local := testing.AllocsPerRun(100, func() {
		rec := stored // a caller's record, as submit's
		_ = writeRecord(&w, http.StatusCreated, &rec)
	})
	if local != base {
		t.Errorf("writeRecord of a caller's record: %v allocations, %v of one on the heap; want the same", local, base)
	}
	if len(w.body) == 0 {
		t.Error("nothing written")
	}
}

// discard is a ResponseWriter that keeps the last body written.
type discard struct {
	h    http.Header
	body []byte
}

func (d *discard) Header() http.Header {
	if d.h == nil {
		d.h = http.Header{}
	}
	return d.h
}
func (d *discard) Write(b []byte) (int, error) { d.body = b; return len(b), nil }
func (d *discard) WriteHeader(int)             {}
