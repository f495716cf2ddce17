package kvstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

func newStore(t testing.TB) *kvstate.Store {
	t.Helper()
	b := testutil.NewJetStream(t)
	s, err := kvstate.Open(context.Background(), kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pending(id domain.RequestID) *domain.Request {
	now := time.Now().UTC()
	return &domain.Request{ID: id, Tenant: "acme", Agent: "agt_a", Status: domain.StatusPending,
		Capability: domain.Capability{Action: "tools.call", Target: "x"}, Arguments: []byte(`{}`),
		Approver: &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, CreatedAt: now, DeadlineAt: now.Add(time.Hour)}
}

func TestCreateGetAndExists(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	r := pending(domain.NewRequestID())
	rec, err := s.CreateRequest(ctx, r)
	if err != nil || rec.Revision != 0 || rec.KVRevision == 0 {
		t.Fatalf("CreateRequest = %+v, %v", rec, err)
	}
	if _, err := s.CreateRequest(ctx, r); !errors.Is(err, kvstate.ErrExists) {
		t.Fatalf("second create: got %v, want ErrExists", err)
	}
	got, err := s.GetRequest(ctx, "acme", r.ID)
	if err != nil || got.ID != r.ID || got.Status != domain.StatusPending {
		t.Fatalf("GetRequest = %+v, %v", got, err)
	}
	if _, err := s.GetRequest(ctx, "acme", domain.NewRequestID()); !errors.Is(err, kvstate.ErrNotFound) {
		t.Fatalf("missing: got %v, want ErrNotFound", err)
	}
}

// Fifty concurrent deciders: exactly one compare-and-set changes the
// record; the others see it terminal and stop.
func TestTransitionOneWinner(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	r := pending(domain.NewRequestID())
	if _, err := s.CreateRequest(ctx, r); err != nil {
		t.Fatal(err)
	}
	errTerminal := errors.New("terminal")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Transition(ctx, "acme", r.ID, func(r *domain.Request) (string, error) {
				if r.Status.Terminal() {
					return "", errTerminal
				}
				r.Status = domain.StatusApproved
				return events.TypeRequestDecided, nil
			})
			if err == nil {
				wins.Add(1)
			} else if !errors.Is(err, errTerminal) && !errors.Is(err, kvstate.ErrConflict) {
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	wg.Wait()
	got, _ := s.GetRequest(ctx, "acme", r.ID)
	if wins.Load() != 1 || got.Revision != 1 || got.Status != domain.StatusApproved {
		t.Fatalf("wins = %d, revision = %d, status = %s; want 1, 1, approved", wins.Load(), got.Revision, got.Status)
	}
}

func TestTransitionRefusesIllegalMove(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	r := pending(domain.NewRequestID())
	r.Status = domain.StatusDenied
	if _, err := s.CreateRequest(ctx, r); err != nil {
		t.Fatal(err)
	}
	_, err := s.Transition(ctx, "acme", r.ID, func(r *domain.Request) (string, error) {
		r.Status = domain.StatusApproved
		return events.TypeRequestDecided, nil
	})
	if !errors.Is(err, kvstate.ErrIllegal) {
		t.Fatalf("denied → approved: got %v, want ErrIllegal", err)
	}
	if got, _ := s.GetRequest(ctx, "acme", r.ID); got.Status != domain.StatusDenied || got.Revision != 0 {
		t.Fatalf("record changed: %+v", got)
	}
}

func TestIdempotencyClaim(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	key := kvstate.IdempotencyKey("acme", domain.Ref{Kind: "agent", ID: "agt_a"}, "k-1")
	first := kvstate.Idempotency{RequestID: "req_1", BodyDigest: "d1"}
	got, took, err := s.ClaimIdempotency(ctx, key, first, time.Hour)
	if err != nil || !took || got.RequestID != "req_1" {
		t.Fatalf("first claim = %+v, %v, %v", got, took, err)
	}
	got, took, err = s.ClaimIdempotency(ctx, key, kvstate.Idempotency{RequestID: "req_2", BodyDigest: "d2"}, time.Hour)
	if err != nil || took || got.RequestID != "req_1" || got.BodyDigest != "d1" {
		t.Fatalf("second claim = %+v, %v, %v; want the first", got, took, err)
	}
	other := kvstate.IdempotencyKey("acme", domain.Ref{Kind: "agent", ID: "agt_b"}, "k-1")
	if other == key {
		t.Fatal("keys must be per principal")
	}
}

// Each write carries its CloudEvent in the message headers: one durable
// write per change.
func TestWriteCarriesEvent(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	s, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := pending(domain.NewRequestID())
	if _, err := s.CreateRequest(ctx, r); err != nil {
		t.Fatal(err)
	}
	stream, _ := b.JS.Stream(ctx, kvstate.StreamOf(kvstate.BucketRequests))
	msg, err := stream.GetLastMsgForSubject(ctx, "$KV.requests.acme."+string(r.ID))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := events.DecodeHeaders(msg.Header)
	if err != nil || ev.Type() != events.TypeRequestCreated || ev.Subject() != string(r.ID) {
		t.Fatalf("event in headers = %v, %v", ev, err)
	}
	info, _ := stream.Info(ctx)
	if info.State.Msgs != 1 {
		t.Fatalf("stream holds %d messages after one create, want 1", info.State.Msgs)
	}
}

// Concurrent writes are group-committed, as atomic batches or as pipelined
// single writes: either way every writer gets the stream sequence its own
// message was stored at, and a conflicting write inside a group fails
// alone.
func TestGroupCommitSequences(t *testing.T) {
	for _, singles := range []bool{false, true} {
		t.Run(map[bool]string{false: "batches", true: "singles"}[singles], func(t *testing.T) {
			s := newStore(t)
			kvstate.CommitWay(s, singles)
			testGroupCommitSequences(t, s)
		})
	}
}

// On a store in memory (Config.SyncsFree) every group goes singly, however
// the costs measured would have it; elsewhere the measures decide.
func TestSyncsFreeCommitsSingly(t *testing.T) {
	ctx := context.Background()
	for _, free := range []bool{true, false} {
		b := testutil.NewJetStream(t)
		s, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1, SyncsFree: free})
		if err != nil {
			t.Fatal(err)
		}
		c := kvstate.RequestChooser(s)
		c.ObserveBatch(time.Microsecond) // batches measured as far cheaper
		c.ObserveSingles(time.Millisecond, 10*time.Millisecond, 2)
		want := kvstate.AsBatch
		if free {
			want = kvstate.AsSingles
		}
		if w, k := c.Choose(50); w != want || k != 50 {
			t.Errorf("SyncsFree %v: a group of 50 goes way %d with %d, want way %d with all", free, w, k, want)
		}
	}
}

// The commit way follows the costs measured: a group goes as singles when
// that many singles cost less than one batch; singles are measured, and
// re-tried, only on small groups (each costs a sync on a slow disk); the
// way not taken is tried every probeEvery groups.
func TestCommitWayFollowsTheCost(t *testing.T) {
	var c kvstate.Chooser
	way := func(n int) int { w, _ := c.Choose(n); return w }
	if w, k := c.Choose(50); w != kvstate.AsBatch || k != 50 {
		t.Fatalf("first group of 50: way %d with %d, want a batch of all", w, k)
	}
	c.ObserveBatch(time.Millisecond) // a slow sync: 1 ms a batch
	if w, k := c.Choose(50); w != kvstate.AsSingles || k != 4 {
		t.Fatalf("a group of 50 with singles unmeasured: way %d with %d, want its first 4 singly (a probe)", w, k)
	}
	if w, k := c.Choose(2); w != kvstate.AsSingles || k != 2 {
		t.Fatalf("a group of 2 with singles unmeasured: way %d with %d, want both singly", w, k)
	}
	c.ObserveSingles(500*time.Microsecond, 800*time.Microsecond, 2) // 0.8 ms a further write
	count := func(groups, n int) (singles, probes int) {
		for range groups {
			if w, k := c.Choose(n); w == kvstate.AsSingles {
				singles++
				if k < n {
					probes++
				}
			}
		}
		return singles, probes
	}
	// Two writes singly cost more than a batch: groups of 3 go singly only
	// as probes, and groups of 50 probe their first 4 writes.
	if got, _ := count(320, 3); got != 10 {
		t.Fatalf("groups of 3 went singly %d times in 320, want 10 (probes)", got)
	}
	if got, probes := count(320, 50); got != 10 || probes != 10 {
		t.Fatalf("groups of 50 went singly %d times (%d probes) in 320, want 10 probes of 4", got, probes)
	}
	// Syncs became nearly free (tmpfs) and the machine is loaded: a batch
	// now costs 1 ms, a round trip 100 µs, each further write 10 µs. 60
	// singles (about 690 µs) win, and batches are re-tried every 32 groups.
	// (Counting the round trip in every write, as a probe of 4 writes
	// taking 130 µs would suggest, 60 would cost 1.95 ms: batches.)
	for range 30 {
		c.ObserveBatch(time.Millisecond)
		c.ObserveSingles(100*time.Microsecond, 30*time.Microsecond, 4)
	}
	if got, _ := count(320, 60); got != 310 {
		t.Fatalf("groups of 60 went singly %d times in 320, want 310", got)
	}
	// A disk syncing in 400 µs: a round trip 500 µs, then 400 µs a write,
	// a batch 4 ms. Batches win for 60, singles for 2.
	for range 30 {
		c.ObserveBatch(4 * time.Millisecond)
		c.ObserveSingles(500*time.Microsecond, 1200*time.Microsecond, 4)
	}
	if got, probes := count(320, 60); got != 10 || probes != 10 {
		t.Fatalf("disk: groups of 60 went singly %d times (%d probes) in 320, want 10 probes", got, probes)
	}
	if w := way(2); w != kvstate.AsSingles {
		t.Fatalf("disk: a group of 2 went %d, want singles (900 µs against a 4 ms batch)", w)
	}
}

func testGroupCommitSequences(t *testing.T, s *kvstate.Store) {
	ctx := context.Background()
	const n = 300
	recs := make([]kvstate.Record, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if recs[i], err = s.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
				t.Errorf("create %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for i, rec := range recs {
		got, err := s.GetRequest(ctx, "acme", rec.ID)
		if err != nil || got.KVRevision != rec.KVRevision || seen[rec.KVRevision] {
			t.Fatalf("write %d: returned revision %d, stored %d (%v)", i, rec.KVRevision, got.KVRevision, err)
		}
		seen[rec.KVRevision] = true
	}
	// A create of an existing key among fresh ones: only it fails.
	errs := make([]error, 50)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := pending(domain.NewRequestID())
			if i == 25 {
				r = &recs[0].Request
			}
			_, errs[i] = s.CreateRequest(ctx, r)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 25) != errors.Is(err, kvstate.ErrExists) || (i != 25 && err != nil) {
			t.Errorf("create %d: %v", i, err)
		}
	}
}

// An idempotency key expires after its TTL and can then be taken again
// (its expiry leaves a marker, which a plain create must step over).
func TestIdempotencyExpires(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	key := kvstate.IdempotencyKey("acme", domain.Ref{Kind: "agent", ID: "agt_a"}, "short")
	if _, took, err := s.ClaimIdempotency(ctx, key, kvstate.Idempotency{RequestID: "req_1", BodyDigest: "d1"}, time.Second); !took || err != nil {
		t.Fatalf("first claim: %v %v", took, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, took, err := s.ClaimIdempotency(ctx, key, kvstate.Idempotency{RequestID: "req_2", BodyDigest: "d2"}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if took && got.RequestID == "req_2" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the key was not reusable 10s after a 1s TTL (holds %+v)", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A write's record carries the JSON it stored (which the API answers with
// as it is): the bytes of the stored value, which are the record encoded;
// a record read back carries none.
func TestWrittenRecordsCarryTheirStoredJSON(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	r := pending(domain.NewRequestID())
	r.Arguments = []byte(`{"path":"<a&b>/é"}`)
	created, err := s.CreateRequest(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	next, err := s.Transition(ctx, "acme", r.ID, func(r *domain.Request) (string, error) {
		r.Status = domain.StatusApproved
		r.Decision = &domain.Decision{Status: domain.StatusApproved, By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, Scope: domain.ScopeOnce, DecidedAt: time.Now().UTC()}
		return events.TypeRequestDecided, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for what, rec := range map[string]kvstate.Record{"created": created, "decided": next} {
		kv, _ := s.RequestShard(0)
		entry, err := kv.GetRevision(ctx, kvstate.RequestKey("acme", r.ID), rec.KVRevision)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec.Stored(), entry.Value()) {
			t.Errorf("%s: Stored()\n%s\nthe stored value\n%s", what, rec.Stored(), entry.Value())
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&rec.Request); err != nil || !bytes.Equal(rec.Stored(), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
			t.Errorf("%s: Stored() is not the record encoded: %s (%v)", what, buf.Bytes(), err)
		}
	}
	read, err := s.GetRequest(ctx, "acme", r.ID)
	if err != nil || read.Stored() != nil {
		t.Errorf("a record read back carries stored bytes %q (%v)", read.Stored(), err)
	}
}

// TestSameKeyWritesShareNoBatch: two people answering one request at the
// same instant write one key with the same expected sequence. The loser
// is told it lost (and applies again on the new revision), and its write
// never shares a batch with the winner's: such a batch would be refused
// whole and every other write in it would go singly.
func TestSameKeyWritesShareNoBatch(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	kvstate.CommitWay(s, false)
	var ids []domain.RequestID
	for i := 0; i < 40; i++ {
		r := pending(domain.NewRequestID())
		if _, err := s.CreateRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		for n := 0; n < 2; n++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Transition(ctx, "acme", id, func(r *domain.Request) (string, error) {
					r.Reason += "x"
					return events.TypeRequestUpdated, nil
				})
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			}()
		}
	}
	wg.Wait()
	for _, id := range ids {
		if got, err := s.GetRequest(ctx, "acme", id); err != nil || got.Revision != 2 || got.Reason != "xx" {
			t.Errorf("%s: revision %d, reason %q (%v); want both answers kept, at 2", id, got.Revision, got.Reason, err)
		}
	}
	if n := kvstate.BatchesRefused(s); n != 0 {
		t.Errorf("%d batches refused whole, want none", n)
	}
}

// largePending is a pending request whose arguments are past
// kvstate.LargeArguments.
func largePending(id domain.RequestID) *domain.Request {
	r := pending(id)
	r.Arguments = []byte(`{"blob":"` + strings.Repeat("x", 2*kvstate.LargeArguments) + `"}`)
	return r
}

// A record held without its large arguments (what a mirror holds) reads
// them back with Full, and a change made from it keeps them: the
// transition re-reads the record before its compare-and-set.
func TestPartialRecordKeepsItsArguments(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	r := largePending(domain.NewRequestID())
	rec, err := s.CreateRequest(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	held := rec
	held.Trim()
	if !held.Partial() || held.Arguments != nil {
		t.Fatalf("trimmed: partial %v, %d bytes of arguments; want partial, none", held.Partial(), len(held.Arguments))
	}
	small := kvstate.Record{Request: *pending(domain.NewRequestID())}
	if small.Trim(); small.Partial() || small.Arguments == nil {
		t.Errorf("small arguments trimmed: partial %v", small.Partial())
	}
	full, err := s.Full(ctx, held)
	if err != nil || !bytes.Equal(full.Arguments, r.Arguments) || full.KVRevision != rec.KVRevision || full.Partial() {
		t.Fatalf("Full: %d bytes at revision %d (partial %v), %v; want %d at %d", len(full.Arguments), full.KVRevision, full.Partial(), err, len(r.Arguments), rec.KVRevision)
	}
	next, err := s.TransitionFrom(ctx, held, func(q *domain.Request) (string, error) {
		if !bytes.Equal(q.Arguments, r.Arguments) {
			t.Errorf("the mutation saw %d bytes of arguments, want %d", len(q.Arguments), len(r.Arguments))
		}
		q.Endorsements = append(q.Endorsements, domain.Endorsement{Agent: "agt_b", At: time.Now()})
		return events.TypeRequestEscalated, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.GetRequest(ctx, "acme", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]json.RawMessage{"returned": next.Arguments, "stored": stored.Arguments} {
		if !bytes.Equal(got, r.Arguments) {
			t.Errorf("%s after the change: %.40q (%d bytes), want the %d bytes submitted", name, got, len(got), len(r.Arguments))
		}
	}
}
