package deciders

import (
	"testing"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// An offer stops when its request moves to a later revision or is
// removed, never when a lagging mirror delivers an older revision.
func TestOffersStopOnlyOnALaterRevision(t *testing.T) {
	tests := []struct {
		name    string
		rev     uint64
		status  events.Status
		deleted bool
		stops   bool
	}{
		{"older revision (mirror lagging)", 1, events.StatusPending, false, false},
		{"same revision", 2, events.StatusPending, false, false},
		{"escalated", 3, events.StatusPending, false, true},
		{"decided", 3, events.StatusDenied, false, true},
		{"removed", 0, "", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stopped := false
			o := &Offers{loops: map[string]*offerLoop{"demo.req_1": {rev: 2, cancel: func() { stopped = true }}}}
			o.Observe("demo.req_1", kvstate.Record{Request: events.Request{Revision: tt.rev, Status: tt.status}}, tt.deleted)
			if stopped != tt.stops {
				t.Fatalf("stopped = %v, want %v", stopped, tt.stops)
			}
		})
	}
}
