package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/outbox"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func startApp(t *testing.T, dir string, roles ...string) *app.App {
	t.Helper()
	cfg := config.Demo()
	cfg.DataDir, cfg.Roles, cfg.NATSListen = dir, roles, "off"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := launch(context.Background(), app.Options{Config: cfg, Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func stopApp(t *testing.T, a *app.App) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// streamMsgs returns the messages on subject in stream.
func streamMsgs(t *testing.T, js jetstream.JetStream, stream, subject string) []jetstream.Msg {
	t.Helper()
	ctx := context.Background()
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.FetchNoWait(1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for m := range batch.Messages() {
		out = append(out, m)
	}
	return out
}

// Writes made while no outbox runs (an API-only process, then a stop) get
// their events once an outbox runs, exactly once: each carries the
// CloudEvent of the write and Nats-Msg-Id <id>:<revision>. The durable copy
// of the event is the write itself: after another restart (which empties
// the in-memory events stream) the stored write still holds the same event.
func TestOutboxDerivesEventsFromTheWrite(t *testing.T) {
	dir := t.TempDir()
	a := startApp(t, dir, "api")
	main := newClient("http://"+a.Addr(), "dev-main")
	var r record
	if code := main.do(t, "POST", "/v1/requests", refund(7), nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	stopApp(t, a)

	a = startApp(t, dir, "api", "deciders")
	js := a.Broker.JS
	subject := events.EventSubject("demo", events.TypeRequestCreated)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(streamMsgs(t, js, events.EventsStream, subject)) > 0 }, "created event derived")
	waitMarker(t, a)
	got := about(streamMsgs(t, js, events.EventsStream, subject), r.ID)
	if len(got) != 1 {
		t.Fatalf("%d created events, want 1", len(got))
	}
	h := got[0].Headers()
	if h.Get("ce-subject") != r.ID || h.Get("ce-type") != events.TypeRequestCreated || h.Get("Nats-Msg-Id") != r.ID+":0" ||
		h.Get("ce-source") != "/countersign/demo" || h.Get("ce-revision") != "0" {
		t.Fatalf("event headers = %v", h)
	}
	eventID := h.Get("ce-id")
	stopApp(t, a)

	a = startApp(t, dir, "api", "deciders")
	defer stopApp(t, a)
	stored, err := a.Service.Store().LastWrite(context.Background(), "demo", domain.RequestID(r.ID))
	if err != nil {
		t.Fatal(err)
	}
	if stored.Header.Get("ce-id") != eventID || stored.Header.Get("ce-type") != events.TypeRequestCreated {
		t.Fatalf("stored write's event = %v, want ce-id %s", stored.Header, eventID)
	}
	waitMarker(t, a)
	if n := len(about(streamMsgs(t, a.Broker.JS, events.EventsStream, subject), r.ID)); n > 1 {
		t.Fatalf("%d created events after a restart, want at most 1", n)
	}
}

// Escalation emits an escalated event and a work message on the next
// decider's subject.
func TestEscalationReachesTheNextDecider(t *testing.T) {
	a := startApp(t, t.TempDir(), "api", "deciders")
	defer stopApp(t, a)
	url := "http://" + a.Addr()
	work := make(chan *nats.Msg, 16)
	sub, err := a.Broker.Conn.ChanSubscribe("countersign.demo.decide.>", work)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	prog, main := newClient(url, "dev-programmer"), newClient(url, "dev-main")
	var r record
	prog.do(t, "POST", "/v1/requests", refund(1), nil, &r)
	if code := main.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "abstain"}, nil, nil); code != 200 {
		t.Fatalf("abstain: %d", code)
	}
	// Each work message goes to its decider's subject: created to agt_main,
	// escalated to the person above it.
	want := map[string]string{events.TypeRequestCreated: "countersign.demo.decide.agent.agt_main",
		events.TypeRequestEscalated: "countersign.demo.decide.person.u-1"}
	for len(want) > 0 {
		select {
		case m := <-work:
			typ := m.Header.Get("ce-type")
			if m.Header.Get("ce-subject") != r.ID || want[typ] == "" {
				continue
			}
			if m.Subject != want[typ] {
				t.Errorf("%s work message on %s, want %s", typ, m.Subject, want[typ])
			}
			delete(want, typ)
		case <-time.After(10 * time.Second):
			t.Fatalf("work messages never seen: %v", want)
		}
	}
	js := a.Broker.JS
	testutil.Eventually(t, 10*time.Second, func() bool {
		return len(streamMsgs(t, js, events.EventsStream, events.EventSubject("demo", events.TypeRequestEscalated))) == 1
	}, "one escalated event")
	// The agents' work stream is a work queue: the decider worker acks
	// (removes) what it consumed, so look at what was ever stored; the
	// person's work goes to the people's work stream, read by nobody.
	if agents, people := workStored(t, js, events.WorkStream), workStored(t, js, events.PeopleWorkStream); agents < 1 || people < 1 {
		t.Fatalf("work streams saw %d (agents) and %d (people) messages, want the created (→ agt_main) and escalated (→ person) ones", agents, people)
	}
}

// workStored is how many messages the work stream named ever stored.
func workStored(t *testing.T, js jetstream.JetStream, stream string) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), stream)
	if err != nil {
		return 0
	}
	info, err := st.Info(context.Background())
	if err != nil {
		return 0
	}
	return info.State.LastSeq
}

// Work lives in a memory stream: after a restart the outbox re-derives a
// work message for every request still pending, on its decider's subject
// (SPEC §9), so a decider that reads the work stream finds it again.
func TestRestartRederivesPendingWork(t *testing.T) {
	srv := servertest.Start(t)
	main := newClient(srv.URL, "dev-main")
	for i := range 3 {
		var r record
		if code := main.do(t, "POST", "/v1/requests", refund(i), nil, &r); code != 201 || r.Status != "pending" {
			t.Fatalf("submit: %d %s", code, r.Status)
		}
	}
	// The outbox derived (and acked) all three before the restart.
	testutil.Eventually(t, 10*time.Second, func() bool {
		cons, err := srv.App.Broker.JS.Consumer(context.Background(), kvstate.StreamOf(kvstate.BucketRequests), outbox.Consumer)
		if err != nil {
			return false
		}
		info, err := cons.Info(context.Background())
		return err == nil && info.AckFloor.Stream >= 3 && info.NumAckPending == 0
	}, "the outbox acked the three writes")
	srv.Restart(t)
	js := srv.App.Broker.JS
	testutil.Eventually(t, 10*time.Second, func() bool {
		return workStored(t, js, events.WorkStream)+workStored(t, js, events.PeopleWorkStream) >= 3
	}, "a work message for each of the 3 pending requests after the restart")
}

// waitMarker submits a marker request and waits for its event: the outbox
// derives writes in order, so any event of an earlier write (a duplicate
// included) is published by then. An event, not a sleep.
func waitMarker(t *testing.T, a *app.App) {
	t.Helper()
	var marker record
	if code := newClient("http://"+a.Addr(), "dev-sub").do(t, "POST", "/v1/requests", refund(999), nil, &marker); code != 201 {
		t.Fatalf("marker submit: %d", code)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return hasEventFor(t, a.Broker.JS, marker.ID) }, "the marker's event")
}

// about keeps the messages whose event is about request id.
func about(msgs []jetstream.Msg, id string) []jetstream.Msg {
	var out []jetstream.Msg
	for _, m := range msgs {
		if m.Headers().Get("ce-subject") == id {
			out = append(out, m)
		}
	}
	return out
}
