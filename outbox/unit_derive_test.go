package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/outbox"
	"github.com/countersign/countersign/views"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// deriveFixture is the state on a real JetStream, the use cases on it, and
// an outbox running until the test ends.
type deriveFixture struct {
	js     jetstream.JetStream
	svc    *approvals.Service
	agent  approvals.Caller
	person approvals.Caller
	work   *nats.Subscription // every work message published, as a subscriber hears it
}

func newDeriveFixture(t *testing.T) *deriveFixture {
	t.Helper()
	br := testutil.NewJetStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	store, views, tenants := stateOn(t, ctx, br.JS)
	svc, err := approvals.New(approvals.Config{Store: store, Views: views, Checker: newChecker(views)})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range events.StreamConfigs(1) {
		if _, err := br.JS.CreateOrUpdateStream(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	// The people's work stream keeps nothing (no consumer reads it): a
	// subscriber hears its messages, from before the first is published.
	work, err := br.Conn.SubscribeSync(events.DecideFilter)
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Conn.Flush(); err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.New(outbox.Config{JS: br.JS, Store: store, Views: views, Grants: svc, Streams: events.StreamConfigs(1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ob.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("outbox Run: %v", err)
		}
	})
	caller := func(kind, id string, scopes ...string) approvals.Caller {
		p := domain.Ref{Kind: kind, ID: id}
		return approvals.Caller{Tenant: tenants[0], Principal: p, Token: domain.Token{Principal: p, Scopes: scopes}}
	}
	return &deriveFixture{js: br.JS, svc: svc, work: work,
		agent:  caller(domain.KindAgent, "agt_a", domain.ScopeRequestsWrite),
		person: caller(domain.KindPerson, "u-1", domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite)}
}

func (f *deriveFixture) submit(t *testing.T) kvstate.Record {
	t.Helper()
	rec, _, err := f.svc.Submit(context.Background(), f.agent, approvals.SubmitInput{Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`)}, "", "")
	if err != nil || rec.Status != domain.StatusPending {
		t.Fatalf("submit: %v %s", err, rec.Status)
	}
	return rec
}

// stored is how many messages stream has stored, kept or not: a message
// deduplicated as a repeat is not stored.
func (f *deriveFixture) stored(t *testing.T, stream string) uint64 {
	t.Helper()
	s, err := f.js.Stream(context.Background(), stream)
	if err != nil {
		return 0
	}
	info, err := s.Info(context.Background())
	if err != nil {
		return 0
	}
	return info.State.LastSeq
}

// heard is the next work message a subscriber heard.
func (f *deriveFixture) heard(t *testing.T) *nats.Msg {
	t.Helper()
	m, err := f.work.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no work message heard: %v", err)
	}
	return m
}

// msgs returns the messages stream holds on subject, in order.
func (f *deriveFixture) msgs(t *testing.T, stream, subject string) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	s, err := f.js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue // deleted
		}
		if subject == "" || m.Subject == subject {
			out = append(out, m)
		}
	}
	return out
}

// The outbox derives each write's event on countersign.<tenant>.events.<type>
// and, while a request waits on a decider, its work on that decider's
// subject, each with the change's Nats-Msg-Id and CloudEvent headers; a
// decision derives its event and no work.
func TestOutboxDerivesEventsAndWork(t *testing.T) {
	f := newDeriveFixture(t)
	rec := f.submit(t)
	created := events.EventSubject("acme", events.TypeRequestCreated)
	work := events.DecideSubject("acme", domain.Ref{Kind: domain.KindPerson, ID: "u-1"})
	testutil.Eventually(t, 10*time.Second, func() bool {
		return len(f.msgs(t, events.EventsStream, created)) == 1 && f.stored(t, events.PeopleWorkStream) == 1
	}, "the created event and the work message derived")
	ev := f.msgs(t, events.EventsStream, created)[0]
	w := f.heard(t)
	if w.Subject != work {
		t.Fatalf("work message on %s, want %s", w.Subject, work)
	}
	for _, m := range []*nats.Msg{{Subject: ev.Subject, Header: ev.Header, Data: ev.Data}, w} {
		if got, want := m.Header.Get(nats.MsgIdHdr), events.MsgID(rec.ID, rec.Revision); got != want {
			t.Errorf("%s: Nats-Msg-Id %q, want %q", m.Subject, got, want)
		}
		c, ok := events.PeekChange(m.Header)
		if !ok || c.Type != events.TypeRequestCreated || c.Subject != string(rec.ID) || c.Tenant != "acme" {
			t.Errorf("%s: change %+v %v", m.Subject, c, ok)
		}
		var r domain.Request
		if json.Unmarshal(m.Data, &r) != nil || r.ID != rec.ID {
			t.Errorf("%s: data is not the record: %s", m.Subject, m.Data)
		}
	}

	dec, err := f.svc.Answer(context.Background(), f.person, rec.ID, approvals.AnswerInput{Expected: &rec.Revision, Decision: approvals.DecisionDeny})
	if err != nil {
		t.Fatal(err)
	}
	decided := events.EventSubject("acme", events.TypeRequestDecided)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.msgs(t, events.EventsStream, decided)) == 1 }, "the decided event derived")
	if got, want := f.msgs(t, events.EventsStream, decided)[0].Header.Get(nats.MsgIdHdr), events.MsgID(rec.ID, dec.Revision); got != want {
		t.Errorf("decided: Nats-Msg-Id %q, want %q", got, want)
	}
	if n := f.stored(t, events.PeopleWorkStream); n != 1 {
		t.Errorf("the people's work stream stored %d messages by the decision, want the one of the creation", n)
	}
}

// A write delivered again (its consumer lost, so every write is read
// anew) derives nothing twice: the streams' dedup drops the repeats.
func TestOutboxDerivesEachChangeOnce(t *testing.T) {
	f := newDeriveFixture(t)
	ctx := context.Background()
	for range 3 {
		f.submit(t)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.msgs(t, events.EventsStream, "")) == 3 }, "three created events")
	if err := f.js.DeleteConsumer(ctx, kvstate.StreamOf(kvstate.RequestBucket(0)), outbox.Consumer); err != nil {
		t.Fatal(err)
	}
	// A fourth write after the loss; once the outbox's consumer (made
	// again, from the start) has read and acked all four, count.
	f.submit(t)
	testutil.Eventually(t, 20*time.Second, func() bool {
		c, err := f.js.Consumer(ctx, kvstate.StreamOf(kvstate.RequestBucket(0)), outbox.Consumer)
		if err != nil {
			return false
		}
		info, err := c.Info(ctx)
		return err == nil && info.Delivered.Stream >= 4 && info.NumPending == 0 && info.NumAckPending == 0 && info.AckFloor.Stream >= 4
	}, "every write read again and acked")
	if n := len(f.msgs(t, events.EventsStream, "")); n != 4 {
		t.Errorf("the events stream holds %d events, want 4 (none doubled)", n)
	}
	if n := f.stored(t, events.PeopleWorkStream); n != 4 {
		t.Errorf("the people's work stream stored %d messages, want 4 (none doubled)", n)
	}
}

// A derived stream lost (it lives in memory; here the people's work
// stream, the fixture's requests wait on a person) is made again at the
// next republish that fails, and the work of every pending request is
// derived again, once.
func TestOutboxHealsALostWorkStream(t *testing.T) {
	f := newDeriveFixture(t)
	ctx := context.Background()
	f.submit(t)
	testutil.Eventually(t, 10*time.Second, func() bool { return f.stored(t, events.PeopleWorkStream) == 1 }, "the first work message")
	if err := f.js.DeleteStream(ctx, events.PeopleWorkStream); err != nil {
		t.Fatal(err)
	}
	f.submit(t)
	testutil.Eventually(t, 20*time.Second, func() bool { return f.stored(t, events.PeopleWorkStream) == 2 },
		"the work stream made again, with both pending requests' work")
}

const deriveYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}]
`

// stateOn opens the KV state on js and runs its views until ctx ends.
func stateOn(t *testing.T, ctx context.Context, js jetstream.JetStream) (*kvstate.Store, *views.Views, []*domain.Tenant) {
	t.Helper()
	cfg, err := config.Parse([]byte(deriveYAML))
	if err != nil {
		t.Fatal(err)
	}
	tenants, err := cfg.DomainTenants()
	if err != nil {
		t.Fatal(err)
	}
	store, err := kvstate.Open(ctx, kvstate.Config{JS: js, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := views.New(views.Config{Store: store, Tenants: tenants})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = vs.Run(ctx) }()
	if err := vs.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return store, vs, tenants
}
