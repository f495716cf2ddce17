package deciders_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// A person's work message needs nothing from the worker: it is acked
// unread (a body that does not decode is not terminated), while an agent's
// undecodable one is.
func TestWorkerAcksPersonWorkUnread(t *testing.T) {
	b := testutil.NewJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, cfg := range events.StreamConfigs(1) {
		if _, err := b.JS.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	terminated, err := b.Conn.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED." + events.WorkStream + "." + events.DeciderConsumer)
	if err != nil {
		t.Fatal(err)
	}
	person := events.DecideSubject("acme", domain.Ref{Kind: domain.KindPerson, ID: "alice"})
	agent := events.DecideSubject("acme", domain.Ref{Kind: domain.KindAgent, ID: "agt_x"})
	for _, subj := range []string{person, agent} {
		if _, err := b.JS.Publish(ctx, subj, []byte("not a record")); err != nil {
			t.Fatal(err)
		}
	}
	w, err := deciders.NewWorker(deciders.WorkerConfig{JS: b.JS})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()

	m, err := terminated.NextMsg(20 * time.Second) // the agent's, handled after the person's
	if err != nil {
		t.Fatalf("no message terminated: %v", err)
	}
	var adv struct {
		StreamSeq uint64 `json:"stream_seq"`
	}
	if err := json.Unmarshal(m.Data, &adv); err != nil {
		t.Fatal(err)
	}
	if adv.StreamSeq != 2 {
		t.Fatalf("terminated stream sequence %d (the person's work is 1, the agent's 2); want only the agent's", adv.StreamSeq)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		s, err := b.JS.Stream(ctx, events.WorkStream)
		if err != nil {
			return false
		}
		info, err := s.Info(ctx)
		return err == nil && info.State.Msgs == 0
	}, "the person's work message is acked")
	if m, err := terminated.NextMsg(100 * time.Millisecond); err == nil {
		t.Errorf("one more message terminated: %s", m.Data)
	}
}
