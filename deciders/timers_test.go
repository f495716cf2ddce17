package deciders_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// Timers arm one timer per pending request on their clock, and none once
// Run has returned: every armed timer is stopped then.
func TestTimersStopWhenRunReturns(t *testing.T) {
	f := newFixture(t)
	clock := testutil.NewClock(time.Now())
	tm, err := deciders.NewTimers(deciders.TimersConfig{Views: f.views, Act: noActions{}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	pending := func(id string) kvstate.Record {
		r := req("prog", "tools.call", "deploy", "", "tool")
		r.ID, r.Status, r.DeadlineAt = domain.RequestID(id), domain.StatusPending, clock.Now().Add(time.Hour)
		r.Approver = &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
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

// noActions: this test only counts armed timers; none fires.
type noActions struct{}

func (noActions) Expire(context.Context, domain.TenantID, domain.RequestID) error { return nil }
func (noActions) PassUp(context.Context, domain.TenantID, domain.RequestID, domain.Ref, uint64) error {
	return nil
}
func (noActions) MoveToBackup(context.Context, domain.TenantID, domain.RequestID, domain.Ref, uint64) error {
	return nil
}
func (noActions) RemoveRequest(context.Context, domain.TenantID, domain.RequestID, uint64) error {
	return nil
}
func (noActions) RemoveGrant(context.Context, domain.TenantID, domain.GrantID, uint64) error {
	return nil
}

// The constructors refuse what they cannot run with, and a nil logger is
// the default one, never a panic later.
func TestConstructorsValidate(t *testing.T) {
	f := newFixture(t)
	if _, err := deciders.NewTimers(deciders.TimersConfig{Views: f.views}); !errors.Is(err, deciders.ErrConfig) {
		t.Errorf("timers without actions: %v, want ErrConfig", err)
	}
	if _, err := deciders.NewWorker(deciders.WorkerConfig{}); !errors.Is(err, deciders.ErrConfig) {
		t.Errorf("worker without JetStream: %v, want ErrConfig", err)
	}
	if _, err := deciders.NewTimers(deciders.TimersConfig{Views: f.views, Act: noActions{}}); err != nil {
		t.Errorf("timers with a nil logger and clock: %v", err)
	}
}

// Timers hold of a pending request only what its timer reads, not the
// record: a million pending requests each hold one, and a pending
// request's memory stays a small multiple of its stored size (SPEC §5
// "Quotas"). Records with arguments under kvstate.LargeArguments, which
// a trimmed record would keep, cost the timers a few hundred bytes each.
func TestTimersHoldOnlyWhatTheirTimersRead(t *testing.T) {
	f := newFixture(t)
	clock := testutil.NewClock(time.Now())
	tm, err := deciders.NewTimers(deciders.TimersConfig{Views: f.views, Act: noActions{}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	const n, args = 2000, 3 << 10
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := live()
	for i := range n {
		r := req("prog", "tools.call", "deploy", "", "tool")
		r.ID, r.Status, r.DeadlineAt = domain.RequestID(fmt.Sprint("req_", i)), domain.StatusPending, clock.Now().Add(time.Hour)
		r.Approver = &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
		r.Arguments = []byte(`{"blob":"` + strings.Repeat("x", args) + `"}`)
		tm.Observe("acme."+string(r.ID), kvstate.Record{Request: *r}, false)
	}
	if n := clock.Waiting(); n != 2000 {
		t.Fatalf("%d timers armed for 2000 pending requests", n)
	}
	per := (int64(live()) - int64(before)) / n
	t.Logf("%d bytes per pending request", per)
	if per > 1<<10 {
		t.Errorf("timers hold %d bytes per pending request with %d bytes of arguments; want under 1 KiB", per, args)
	}
	runtime.KeepAlive(tm)
}
