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

// A person's work message needs nothing from the worker, and never
// reaches it: it is stored on the people's work stream, which no consumer
// reads, while an agent's undecodable one is delivered and terminated.
func TestWorkerNeverGetsPersonWork(t *testing.T) {
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
	group := events.DecideSubject("acme", domain.Ref{Kind: domain.KindGroup, ID: "finance"})
	agent := events.DecideSubject("acme", domain.Ref{Kind: domain.KindAgent, ID: "agt_x"})
	for _, subj := range []string{person, group, agent} {
		ack, err := b.JS.Publish(ctx, subj, []byte("not a record"))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: events.WorkStream, false: events.PeopleWorkStream}[subj == agent]; ack.Stream != want {
			t.Fatalf("%s stored on %s, want %s", subj, ack.Stream, want)
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

	m, err := terminated.NextMsg(20 * time.Second)
	if err != nil {
		t.Fatalf("no message terminated: %v", err)
	}
	var adv struct {
		StreamSeq uint64 `json:"stream_seq"`
	}
	if err := json.Unmarshal(m.Data, &adv); err != nil {
		t.Fatal(err)
	}
	if adv.StreamSeq != 1 {
		t.Fatalf("terminated stream sequence %d; want the agent's, the work stream's only message", adv.StreamSeq)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		s, err := b.JS.Stream(ctx, events.WorkStream)
		if err != nil {
			return false
		}
		info, err := s.Info(ctx)
		return err == nil && info.State.Msgs == 0
	}, "the agent's work message is terminated")
	if m, err := terminated.NextMsg(100 * time.Millisecond); err == nil {
		t.Errorf("one more message terminated: %s", m.Data)
	}
	s, err := b.JS.Stream(ctx, events.PeopleWorkStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx); err != nil || info.State.LastSeq != 2 || info.State.Msgs != 0 || info.State.Consumers != 0 {
		t.Fatalf("the people's work stream: %+v %v, want the person's and the group's messages stored, none kept, no consumer", info.State, err)
	}
}
