package views_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

// A hook registered while the mirror runs (as a test's service on running
// views does) is told of later changes, and races with nothing.
func TestOnChangeWhileRunning(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	v := readyViews(t, s)
	told := make(chan domain.RequestID, 16)
	done := make(chan struct{})
	go func() { // writes while the hook is registered
		defer close(done)
		for range 4 {
			if _, err := s.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
				t.Error(err)
			}
		}
	}()
	v.Requests().OnChange(func(_ string, rec kvstate.Record, _ bool) { told <- rec.ID })
	<-done
	last := pending(domain.NewRequestID())
	if _, err := s.CreateRequest(ctx, last); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case id := <-told:
			if id == last.ID {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the hook was not told of a change after it was registered")
		}
	}
}

// The request mirror holds a pending request in full and a terminal one
// as its summary, whether it learnt of it from a write (Apply) or from the
// stored values at start; its indexes walk in id order from a cursor.
func TestRequestMirrorHoldsTerminalRequestsAsSummaries(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	var ids []domain.RequestID
	for i := range 4 {
		r := pending(domain.NewRequestID())
		if i%2 == 1 {
			r.Status = domain.StatusDenied
			r.Decision = &domain.Decision{Status: domain.StatusDenied, By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, DecidedAt: time.Now()}
		}
		if _, err := s.CreateRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	v := readyViews(t, s)
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
		var walked []domain.RequestID
		v.ScanRequests("acme", views.TenantScope("acme"), string(ids[0]), func(id domain.RequestID, sum views.Summary, _ uint64, r *kvstate.Record) bool {
			if (r == nil) != (sum.Status == string(domain.StatusDenied)) {
				t.Errorf("%s: %s held wrongly: %+v, %v", when, id, sum, r != nil)
			}
			walked = append(walked, id)
			return true
		})
		if len(walked) != 3 || walked[0] != ids[1] || walked[2] != ids[3] {
			t.Errorf("%s: walked %v after %s, want %v", when, walked, ids[0], ids[1:])
		}
		var inbox []domain.RequestID
		v.ScanRequests("acme", views.InboxScope("acme", domain.Ref{Kind: domain.KindPerson, ID: "u-1"}), "", func(id domain.RequestID, _ views.Summary, _ uint64, _ *kvstate.Record) bool {
			inbox = append(inbox, id)
			return true
		})
		if len(inbox) != 4 {
			t.Errorf("%s: the person's inbox %v, want all 4", when, inbox)
		}
	}
	check("from the stored values")

	// A request ended by this process's own write goes to its summary.
	rec, err := s.Transition(ctx, "acme", ids[0], func(r *domain.Request) (string, error) {
		r.Status = domain.StatusDenied
		r.Decision = &domain.Decision{Status: domain.StatusDenied, By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, DecidedAt: time.Now()}
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

// A terminal request is held packed, and what the mirror unpacks is the
// stored record, whether the mirror learnt of it from the stored values
// at start, from this process's own write (Apply), or from the watcher.
// Held at another revision than asked, it is not returned.
func TestTerminalRequestsHeldPacked(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	end := func(r *domain.Request) {
		at := time.Now()
		r.Status = domain.StatusApproved
		r.Arguments = json.RawMessage(`{"note":"café \u2028 <b>","n":[1,2.5e3]}`)
		r.Endorsements = domain.Endorsements{{Agent: "agt_main", Note: "ok", At: at}}
		r.Decision = &domain.Decision{Status: domain.StatusApproved, By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, Scope: domain.ScopeOnce, DecidedAt: at, ExpiresAt: &at}
	}
	var ids []domain.RequestID
	create := func() kvstate.Record {
		r := pending(domain.NewRequestID())
		end(r)
		rec, err := s.CreateRequest(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		return rec
	}
	create()
	open := pending(domain.NewRequestID())
	created, err := s.CreateRequest(ctx, open)
	if err != nil {
		t.Fatal(err)
	}
	// Held in full, a record does not keep the bytes its writer kept.
	if created.Stored() == nil {
		t.Fatal("a record just written does not carry its stored bytes")
	}
	hot := newViews(t, s, []*domain.Tenant{{ID: "acme"}})
	hot.Requests().Apply(kvstate.RequestKey("acme", open.ID), created, created.KVRevision)
	if got, ok := hot.Requests().Get(kvstate.RequestKey("acme", open.ID)); !ok || got.Stored() != nil {
		t.Errorf("a pending record held in full (%v) keeps %d stored bytes", ok, len(got.Stored()))
	}
	v, _, _ := runViews(t, s, false)
	rec, err := s.Transition(ctx, "acme", open.ID, func(r *domain.Request) (string, error) {
		end(r)
		return events.TypeRequestDecided, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A mirror with no watcher learns of it only from Apply.
	own := newViews(t, s, []*domain.Tenant{{ID: "acme"}})
	own.Requests().Apply(kvstate.RequestKey("acme", open.ID), rec, rec.KVRevision)
	if got, ok := own.HeldRequest("acme", open.ID, rec.KVRevision); !ok || got.Revision != rec.Revision || string(got.Arguments) != string(rec.Arguments) {
		t.Errorf("a request ended by this process's write: held %v as %+v", ok, got)
	}
	// The same revision again (the watcher bringing this process's own
	// write) keeps nothing more.
	kept := views.PackedKept(own)
	own.Requests().Apply(kvstate.RequestKey("acme", open.ID), rec, rec.KVRevision)
	if again := views.PackedKept(own); kept == 0 || again != kept {
		t.Errorf("packed bytes kept: %d, then %d after the same revision again", kept, again)
	}
	ids = append(ids, open.ID)
	waitHeld(t, v, create()) // the watcher brings it
	for i, id := range ids {
		stored, err := s.GetRequest(ctx, "acme", id)
		if err != nil {
			t.Fatal(err)
		}
		held, ok := v.HeldRequest("acme", id, stored.KVRevision)
		if !ok {
			t.Errorf("request %d is not held packed", i)
			continue
		}
		want, _ := json.Marshal(stored.Request)
		got, _ := json.Marshal(held)
		if string(got) != string(want) {
			t.Errorf("request %d unpacks as\n%s\nstored as\n%s", i, got, want)
		}
		if _, ok := v.HeldRequest("acme", id, stored.KVRevision-1); ok {
			t.Errorf("request %d is returned at a revision it is not held at", i)
		}
	}
}

// Views whose watchers stop before they caught up are not ready: WaitReady
// says why, instead of letting a process serve an empty mirror.
func TestWaitReadyFailsWhenAMirrorStopsFirst(t *testing.T) {
	s := newStore(t)
	v := newViews(t, s, []*domain.Tenant{{ID: "acme"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	<-done
	if err := v.WaitReady(context.Background()); err == nil {
		t.Fatal("ready, though every watcher stopped before it caught up")
	}
}

// A request that ended while waiting on a person (expired, cancelled, or
// decided by someone else) stays in that person's inbox scope, whether the
// mirror read it from the stored values at start (the replay's scanner)
// or from this process's own write; never in anyone else's.
func TestInboxKeepsWhatEndedWhileWaiting(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	u1, u2 := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, domain.Ref{Kind: domain.KindPerson, ID: "u-2"}
	ends := []domain.Decision{
		{Status: domain.StatusExpired, By: domain.Ref{Kind: "deadline"}},
		{Status: domain.StatusCancelled, By: domain.Ref{Kind: domain.KindAgent, ID: "agt_a"}},
		{Status: domain.StatusDenied, By: domain.Ref{Kind: domain.KindPerson, ID: "admin"}},
	}
	end := func(r *domain.Request, d domain.Decision) {
		d.DecidedAt = time.Now()
		r.Status, r.Decision = d.Status, &d
	}
	endOne := func(d domain.Decision) (kvstate.Record, error) {
		r := pending(domain.NewRequestID())
		if _, err := s.CreateRequest(ctx, r); err != nil {
			return kvstate.Record{}, err
		}
		return s.Transition(ctx, "acme", r.ID, func(r *domain.Request) (string, error) {
			end(r, d)
			switch d.Status {
			case domain.StatusExpired:
				return events.TypeRequestExpired, nil
			case domain.StatusCancelled:
				return events.TypeRequestCancelled, nil
			}
			return events.TypeRequestDecided, nil
		})
	}
	var stored, live []domain.RequestID
	for _, d := range ends {
		rec, err := endOne(d)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, rec.ID)
	}
	v, _, _ := runViews(t, s, false)
	for _, d := range ends {
		rec, err := endOne(d)
		if err != nil {
			t.Fatal(err)
		}
		v.Requests().Apply(kvstate.RequestKey("acme", rec.ID), rec, rec.KVRevision)
		live = append(live, rec.ID)
	}
	inbox := func(p domain.Ref) []domain.RequestID {
		var out []domain.RequestID
		v.ScanRequests("acme", views.InboxScope("acme", p), "", func(id domain.RequestID, _ views.Summary, _ uint64, _ *kvstate.Record) bool {
			out = append(out, id)
			return true
		})
		return out
	}
	want := append(append([]domain.RequestID(nil), stored...), live...)
	slices.Sort(want) // the scan walks in id order
	if got := inbox(u1); !reflect.DeepEqual(got, want) {
		t.Errorf("u-1's inbox %v, want the %d requests that ended while waiting on u-1: %v", got, len(want), want)
	}
	if got := inbox(u2); len(got) != 0 {
		t.Errorf("u-2's inbox %v, want none", got)
	}
}

// A mirror holds the record a writer applies as it is, without a copy
// of its own (one allocation per Apply, the value itself): a copy would
// cost a pending request's record twice over while submits run, and the
// copies it drops leave the heap's pages partly used.
func TestMirrorHoldsAnAppliedRecordOnce(t *testing.T) {
	m := views.NewMirror[kvstate.Record](nil, nil)
	r := kvstate.Record{Request: *pending(domain.NewRequestID())}
	r.Arguments = []byte(`{"blob":"small"}`)
	key, rev := kvstate.RequestKey(r.Tenant, r.ID), uint64(0)
	if allocs := testing.AllocsPerRun(100, func() { rev++; m.Apply(key, r, rev) }); allocs > 1 {
		t.Errorf("%v allocations per Apply of a held record; want 1", allocs)
	}
	if got, ok := m.Get(key); !ok || got.Revision != r.Revision || !bytes.Equal(got.Arguments, r.Arguments) {
		t.Errorf("held %v (%v), want the record applied", got.ID, ok)
	}
}

// The request mirror holds a pending request's large arguments nowhere:
// it keeps the record partial (kvstate.Record.Partial), while OnChange is
// told the record whole; small arguments are held as they are.
func TestMirrorHoldsLargeArgumentsInKV(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	v := newViews(t, s, []*domain.Tenant{{ID: "acme"}})
	var told []kvstate.Record
	v.Requests().OnChange(func(_ string, r kvstate.Record, _ bool) { told = append(told, r) })
	big, small := pending(domain.NewRequestID()), pending(domain.NewRequestID())
	big.Arguments = []byte(`{"blob":"` + strings.Repeat("x", 2*kvstate.LargeArguments) + `"}`)
	for _, r := range []*domain.Request{big, small} {
		if _, err := v.WriteRequest(r.Tenant, r.ID, func() (kvstate.Record, error) { return s.CreateRequest(ctx, r) }); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		r       *domain.Request
		partial bool
	}{{big, true}, {small, false}} {
		got, ok := v.Requests().Get(kvstate.RequestKey("acme", c.r.ID))
		wantArgs := c.r.Arguments
		if c.partial {
			wantArgs = nil
		}
		if !ok || got.Partial() != c.partial || !bytes.Equal(got.Arguments, wantArgs) {
			t.Errorf("held (%v): partial %v with %d bytes of arguments; want partial %v with %d", ok, got.Partial(), len(got.Arguments), c.partial, len(wantArgs))
		}
	}
	if len(told) != 2 || !bytes.Equal(told[0].Arguments, big.Arguments) || told[0].Partial() {
		t.Errorf("OnChange told %d records; want 2, the first whole", len(told))
	}
}

// newViews builds the views over s for tenants, failing t if New refuses.
func newViews(t testing.TB, s *kvstate.Store, tenants []*domain.Tenant) *views.Views {
	t.Helper()
	v, err := views.New(views.Config{Store: s, Tenants: tenants})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// readyViews builds the views over s for tenant acme and runs them until
// the test ends, returning once they are ready.
func readyViews(t *testing.T, s *kvstate.Store) *views.Views {
	t.Helper()
	v := newViews(t, s, []*domain.Tenant{{ID: "acme"}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = v.Run(ctx) }()
	if err := v.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return v
}
