package kvstate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
)

// limbo opens a store and subscribes to limbo.>, where no stream listens:
// a write sent there waits for the acknowledgement the test sends.
func limbo(t *testing.T) (*kvstate.Store, *nats.Subscription) {
	t.Helper()
	b := testutil.NewJetStream(t)
	s, err := kvstate.Open(context.Background(), kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := b.Conn.SubscribeSync("limbo.>")
	if err != nil {
		t.Fatal(err)
	}
	return s, sub
}

// A write sent alone, waiting on its acknowledgement when the write probe
// finds a bucket without a leader, is told at once that its outcome is
// unknown, not when its caller gives up.
func TestWriteAloneToldWhenTheBucketIsLost(t *testing.T) {
	s, sub := limbo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := kvstate.WriteRaw(ctx, s, "limbo.a", nil); done <- err }()
	if _, err := sub.NextMsg(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	kvstate.GateWrites(s, fmt.Errorf("%w: bucket requests has no leader", kvstate.ErrUnavailable))
	err := <-done
	if !errors.Is(err, kvstate.ErrUnavailable) || ctx.Err() != nil || !strings.Contains(err.Error(), "may or may not") {
		t.Fatalf("write waiting when the bucket was lost: %v, want ErrUnavailable, outcome unknown, before its deadline", err)
	}
}

// Writes queued while one goes alone are committed once it is answered;
// its acknowledgement reaches it, and acknowledgements nobody waits for
// (sent twice, say) are dropped without holding up the next.
func TestWritesQueuedBehindAWriteAlone(t *testing.T) {
	s, sub := limbo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	alone := make(chan uint64, 1)
	go func() {
		seq, err := kvstate.WriteRaw(ctx, s, "limbo.a", nil)
		if err != nil {
			t.Errorf("write alone: %v", err)
		}
		alone <- seq
	}()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const queued = 8
	var wg sync.WaitGroup
	for range queued {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
				t.Errorf("queued write: %v", err)
			}
		}()
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return kvstate.Queued(s) == queued }, "writes queued behind the one alone")
	for range 3 {
		if err := m.Respond([]byte(`{"stream":"limbo","seq":7}`)); err != nil {
			t.Fatal(err)
		}
	}
	if seq := <-alone; seq != 7 {
		t.Errorf("write alone: sequence %d, want 7 (its acknowledgement's)", seq)
	}
	wg.Wait()
	if _, err := s.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
		t.Errorf("a write after stray acknowledgements: %v", err)
	}
}

func TestPubAck(t *testing.T) {
	noResponders := &nats.Msg{Header: nats.Header{"Status": []string{"503"}}}
	for _, tc := range []struct {
		name    string
		msg     *nats.Msg
		seq     uint64
		wantErr error
	}{
		{"stored", &nats.Msg{Data: []byte(`{"stream":"KV_requests","seq":42}`)}, 42, nil},
		{"wrong last sequence", &nats.Msg{Data: []byte(`{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"}}`)}, 0, kvstate.ErrConflict},
		{"no responders", noResponders, 0, kvstate.ErrNoStream},
	} {
		seq, err := kvstate.PubAck(tc.msg)
		if seq != tc.seq || !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, seq, err, tc.seq, tc.wantErr)
		}
	}
	for _, data := range []string{`{"seq":42}`, `not json`, `{"error":{"code":503,"err_code":10008,"description":"stream offline"}}`} {
		if seq, err := kvstate.PubAck(&nats.Msg{Data: []byte(data)}); err == nil || errors.Is(err, kvstate.ErrConflict) {
			t.Errorf("%s: %d, %v; want an error, not a conflict", data, seq, err)
		}
	}
}

// A probe of singles sends the first few writes of a group singly; the
// others are committed in the next group, none left unanswered.
func TestProbeOfSinglesCommitsTheRestNext(t *testing.T) {
	s, sub := limbo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _, _ = kvstate.WriteRaw(ctx, s, "limbo.a", nil) }()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const queued = 40
	var wg sync.WaitGroup
	for range queued {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.CreateRequest(ctx, pending(domain.NewRequestID())); err != nil {
				t.Errorf("queued write: %v", err)
			}
		}()
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return kvstate.Queued(s) == queued }, "writes queued behind the one alone")
	kvstate.ProbeSingles(s)
	if err := m.Respond([]byte(`{"stream":"limbo","seq":7}`)); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}
