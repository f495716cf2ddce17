package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/outbox"
	"github.com/nats-io/nats.go/jetstream"
)

var requestsStream = kvstate.StreamOf(kvstate.BucketRequests)

// submitN submits n pending requests through a and returns their ids.
func submitN(t *testing.T, a *app.App, from, n int) []string {
	t.Helper()
	main := newClient("http://"+a.Addr(), "dev-main")
	var ids []string
	for i := from; i < from+n; i++ {
		var r record
		if code := main.do(t, "POST", "/v1/requests", refund(i), nil, &r); code != 201 {
			t.Fatalf("submit %d: %d", i, code)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// createdEvents collects the ids of the requests with a created event, as
// they reach the events stream, until the test ends.
type createdEvents struct {
	mu  sync.Mutex
	ids map[string]bool
}

func watchCreated(t *testing.T, js jetstream.JetStream) *createdEvents {
	t.Helper()
	c := &createdEvents{ids: map[string]bool{}}
	cons, err := js.OrderedConsumer(context.Background(), events.EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.EventSubject("demo", events.TypeRequestCreated)}})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		c.mu.Lock()
		c.ids[m.Headers().Get("ce-subject")] = true
		c.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return c
}

func (c *createdEvents) has(ids ...string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if !c.ids[id] {
			return false
		}
	}
	return true
}

// A state message delivered to one outbox that never acks it (its process
// died, or its loop failed with the message still in its buffer) is
// delivered again and its event derived, although another outbox acks the
// writes after it (with cumulative acks, that ack covered it: lost).
func TestOutboxRedeliversWhatAnotherOutboxTookAndDropped(t *testing.T) {
	dir := t.TempDir()
	a := startApp(t, dir, "api", "deciders")
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, err := a.Broker.JS.Consumer(context.Background(), requestsStream, outbox.Consumer)
		return err == nil
	}, "the outbox consumer exists")
	stopApp(t, a)

	a = startApp(t, dir, "api") // no outbox runs
	taken := submitN(t, a, 1, 3)
	cons, err := a.Broker.JS.Consumer(context.Background(), requestsStream, outbox.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(100, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range batch.Messages() { // taken by a process that dies: never acked
		n++
	}
	if n < len(taken) {
		t.Fatalf("took %d state messages, want %d", n, len(taken))
	}
	later := submitN(t, a, 4, 3)
	stopApp(t, a)

	a = startApp(t, dir, "api", "deciders")
	defer stopApp(t, a)
	got := watchCreated(t, a.Broker.JS)
	testutil.Eventually(t, 30*time.Second, func() bool { return got.has(append(taken, later...)...) },
		"every request's created event derived")
}

// An outbox started where the cumulative-ack consumer of earlier versions
// exists replaces it with the explicit-ack one, starting right after the
// old one's ack floor.
func TestOutboxReplacesTheCumulativeAckConsumer(t *testing.T) {
	dir := t.TempDir()
	a := startApp(t, dir, "api")
	ctx := context.Background()
	legacy, err := a.Broker.JS.CreateConsumer(ctx, requestsStream, jetstream.ConsumerConfig{
		Durable: outbox.LegacyConsumer, AckPolicy: jetstream.AckAllPolicy, DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		t.Fatal(err)
	}
	ids := submitN(t, a, 1, 2)
	first, err := legacy.Next(jetstream.FetchMaxWait(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
	floor, _ := first.Metadata()
	stopApp(t, a)

	a = startApp(t, dir, "api", "deciders")
	defer stopApp(t, a)
	js := a.Broker.JS
	got := watchCreated(t, js)
	testutil.Eventually(t, 10*time.Second, func() bool { return got.has(ids[1]) }, "the write after the ack floor derived")
	if _, err := js.Consumer(ctx, requestsStream, outbox.LegacyConsumer); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Errorf("legacy consumer after the upgrade: %v, want it deleted", err)
	}
	cons, err := js.Consumer(ctx, requestsStream, outbox.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cons.CachedInfo().Config
	if cfg.AckPolicy != jetstream.AckExplicitPolicy || cfg.DeliverPolicy != jetstream.DeliverByStartSequencePolicy ||
		cfg.OptStartSeq != floor.Sequence.Stream+1 {
		t.Errorf("new consumer: ack %v, deliver %v from %d, want explicit from %d", cfg.AckPolicy, cfg.DeliverPolicy, cfg.OptStartSeq, floor.Sequence.Stream+1)
	}
	if got.has(ids[0]) {
		t.Errorf("the write the legacy consumer had acked was derived again")
	}
}
