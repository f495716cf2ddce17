package kvstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go/jetstream"
)

// laggingReplica adds a stream that answers the requests bucket's direct
// gets but holds none of its writes, as a follower still catching up does
// (a mirror with mirror_direct joins the direct get queue group once it
// has mirrored a message; this one mirrors only the key lag.x).
func laggingReplica(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx := context.Background()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LAGGING", Storage: jetstream.MemoryStorage,
		Mirror:      &jetstream.StreamSource{Name: kvstate.StreamOf(kvstate.BucketRequests), FilterSubject: "$KV.requests.lag.x"},
		AllowDirect: true, MirrorDirect: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "$KV.requests.lag.x", []byte("{}")); err != nil {
		t.Fatal(err)
	}
}

// On a replicated bucket a replica that lags must not make a request that
// exists look missing or older: the reads that decide go to the leader.
func TestReplicatedReadsIgnoreALaggingReplica(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx := context.Background()
	s, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	kvstate.UseLeaderReads(s)
	r := pending(domain.NewRequestID())
	if _, err := s.CreateRequest(ctx, r); err != nil {
		t.Fatal(err)
	}
	laggingReplica(t, b.JS)
	key := kvstate.RequestKey(r.Tenant, r.ID)
	testutil.Eventually(t, 10*time.Second, func() bool {
		kv, _ := s.RequestShard(0)
		_, err := kv.Get(ctx, key)
		return errors.Is(err, jetstream.ErrKeyNotFound)
	}, "the lagging replica answers a direct get")
	for i := range 100 {
		rec, err := s.GetRequest(ctx, r.Tenant, r.ID)
		if err != nil || rec.Status != domain.StatusPending {
			t.Fatalf("read %d: %+v, %v", i, rec.Status, err)
		}
		if rec, err = s.PeekRequest(ctx, r.Tenant, r.ID, 0); err != nil || rec.Status != domain.StatusPending {
			t.Fatalf("display read %d: %+v, %v", i, rec.Status, err)
		}
	}
	rec, err := s.Transition(ctx, r.Tenant, r.ID, func(q *domain.Request) (string, error) {
		q.Status = domain.StatusCancelled
		q.Decision = &domain.Decision{Status: domain.StatusCancelled, By: domain.Ref{Kind: domain.KindAgent, ID: "agt_a"}}
		return events.TypeRequestCancelled, nil
	})
	if err != nil || rec.Revision != 1 {
		t.Fatalf("transition: %+v, %v", rec, err)
	}
	for i := range 50 {
		if got, err := s.GetRequest(ctx, r.Tenant, r.ID); err != nil || got.Revision != 1 {
			t.Fatalf("read %d after the transition: revision %d, %v", i, got.Revision, err)
		}
		if got, err := s.PeekRequest(ctx, r.Tenant, r.ID, rec.KVRevision); err != nil || got.Revision != 1 {
			t.Fatalf("display read %d after the transition: revision %d, %v", i, got.Revision, err)
		}
	}
}

// A read below the revision the caller already knows is stale: it is read
// again and, if it stays below, is ErrUnavailable (ErrStale), never a
// not-found or an old record.
func TestReadBelowAKnownRevisionIsStale(t *testing.T) {
	kvstate.FewReadRetries(t)
	s, ctx := newStore(t), context.Background()
	r := pending(domain.NewRequestID())
	rec, err := s.CreateRequest(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetRequestAfter(ctx, r.Tenant, r.ID, rec.KVRevision); err != nil || got.KVRevision != rec.KVRevision {
		t.Fatalf("read at the known revision: %+v, %v", got, err)
	}
	_, err = s.GetRequestAfter(ctx, r.Tenant, r.ID, rec.KVRevision+1)
	if !errors.Is(err, kvstate.ErrUnavailable) || !errors.Is(err, kvstate.ErrStale) {
		t.Fatalf("read below a known revision: %v, want ErrUnavailable and ErrStale", err)
	}
	_, err = s.GetRequestAfter(ctx, r.Tenant, domain.NewRequestID(), 1)
	if !errors.Is(err, kvstate.ErrStale) {
		t.Fatalf("not-found below a known revision: %v, want ErrStale", err)
	}
	if _, err := s.GetRequest(ctx, r.Tenant, domain.NewRequestID()); !errors.Is(err, kvstate.ErrNotFound) {
		t.Fatalf("unknown request: %v, want ErrNotFound", err)
	}
}

// A change refused on a record a replica returned is checked against the
// leader's record, and applied to it when the leader's is newer; on a
// record known to be current, the refusal stands.
func TestRefusalOnAReplicasRecordIsCheckedWithTheLeader(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	kvstate.UseLeaderReads(s)
	r := pending(domain.NewRequestID())
	old, err := s.CreateRequest(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TransitionFrom(ctx, old, endorse("agt_b")); err != nil {
		t.Fatal(err)
	}
	atRevision1 := func(q *domain.Request) (string, error) {
		if q.Revision != 1 {
			return "", errors.New("refused: not at revision 1")
		}
		return endorse("agt_c")(q)
	}
	if _, err := s.TransitionFrom(ctx, old, atRevision1); err == nil {
		t.Fatal("refusal on a current record: applied")
	}
	got, err := s.TransitionFrom(ctx, old.MayLag(), atRevision1)
	if err != nil || got.Revision != 2 {
		t.Fatalf("refusal on a replica's old record: %+v, %v; want applied at revision 2", got.Revision, err)
	}
}

func endorse(agent domain.AgentID) kvstate.Mutation {
	return func(q *domain.Request) (string, error) {
		q.Endorsements = append(q.Endorsements, domain.Endorsement{Agent: agent, At: time.Now()})
		return events.TypeRequestEscalated, nil
	}
}

// A change applied through TransitionFrom leaves the record it started from
// alone: that record may be a mirror's copy, read meanwhile by other
// requests (the answer path reads the mirror). A change that wrote through
// a shared stage, slice or pointer would also show in the mirror a change
// whose compare-and-set then failed.
func TestTransitionFromLeavesItsInputAlone(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	r := pending(domain.NewRequestID())
	r.SetStages([]domain.Stage{{Text: "git status"}, {Text: "git push"}})
	r.Chain = make([]domain.AgentID, 1, 4) // room to append in place
	r.Chain[0] = "agt_a"
	r.Endorsements = make(domain.Endorsements, 0, 4)
	cur, err := s.CreateRequest(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	before, err := json.Marshal(cur.Request)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.TransitionFrom(ctx, cur, func(q *domain.Request) (string, error) {
		q.AllowStage(domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, domain.ScopeOnce, time.Now())
		q.Chain = append(q.Chain, "agt_b")
		q.Endorsements = append(q.Endorsements, domain.Endorsement{Agent: "agt_b", At: time.Now()})
		q.Approver.ID = "u-2"
		return events.TypeRequestEscalated, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := json.Marshal(cur.Request)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Fatalf("the input record changed:\n before %s\n after  %s", before, after)
	}
	if cap(cur.Chain) == 4 && cur.Chain[:2][1] == "agt_b" {
		t.Fatal("the change appended to the input's chain in place")
	}
}

// RequestAt reads a request as stored at a revision (what a list page
// shows of a request the mirror holds there), even when a later one
// exists; a removed request, or a revision of another key, is
// ErrNotFound.
func TestRequestAt(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	r := pending(domain.NewRequestID())
	first, err := s.CreateRequest(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	ended := transition(t, s, first, deny("u-1"))
	got, err := s.RequestAt(ctx, r.Tenant, r.ID, first.KVRevision)
	if err != nil || got.Status != domain.StatusPending || got.KVRevision != first.KVRevision {
		t.Fatalf("at the first revision: %s at %d, %v", got.Status, got.KVRevision, err)
	}
	got, err = s.RequestAt(ctx, r.Tenant, r.ID, ended.KVRevision)
	if err != nil || got.Status != domain.StatusDenied || got.Revision != 1 {
		t.Fatalf("at the last revision: %s (revision %d), %v", got.Status, got.Revision, err)
	}
	other := pending(domain.NewRequestID())
	if _, err := s.CreateRequest(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestAt(ctx, other.Tenant, other.ID, ended.KVRevision); !errors.Is(err, kvstate.ErrNotFound) {
		t.Fatalf("another key's revision: %v, want ErrNotFound", err)
	}
	if err := s.RemoveRequest(ctx, r.Tenant, r.ID, ended.KVRevision); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestAt(ctx, r.Tenant, r.ID, ended.KVRevision); !errors.Is(err, kvstate.ErrNotFound) {
		t.Fatalf("a removed request: %v, want ErrNotFound", err)
	}
}

func deny(person string) kvstate.Mutation {
	return func(q *domain.Request) (string, error) {
		q.Status = domain.StatusDenied
		q.Decision = &domain.Decision{Status: domain.StatusDenied, By: domain.Ref{Kind: domain.KindPerson, ID: person}, DecidedAt: time.Now()}
		return events.TypeRequestDecided, nil
	}
}

func transition(t *testing.T, s *kvstate.Store, rec kvstate.Record, fn kvstate.Mutation) kvstate.Record {
	t.Helper()
	rec, err := s.TransitionFrom(context.Background(), rec, fn)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
