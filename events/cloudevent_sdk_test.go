package events_test

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	natsjs "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// sample is an event as countersign writes one: every attribute it sets,
// a traceparent among the extensions, and JSON data.
func sample() (cloudevents.Event, []byte) {
	e := events.NewEvent(events.TypeRequestEscalated, "acme", string(domain.NewRequestID()), 7,
		time.Date(2025, 3, 1, 12, 30, 45, 123456789, time.UTC), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	return e, []byte(`{"id":"req_x","status":"pending"}`)
}

// A countersign-written binary-mode event decodes through the SDK's NATS
// JetStream message reader into the same event, data included.
func TestSDKReaderDecodesOurEvents(t *testing.T) {
	want, data := sample()
	msg := &nats.Msg{Subject: "x", Header: nats.Header{}, Data: data}
	if err := events.EncodeHeaders(want, msg.Header); err != nil {
		t.Fatal(err)
	}
	m := natsjs.NewMessage(msg)
	if m.ReadEncoding() != binding.EncodingBinary {
		t.Fatalf("the SDK reads %v, want binary mode", m.ReadEncoding())
	}
	got, err := binding.ToEvent(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "SDK reader", *got, want)
	if !bytes.Equal(got.Data(), data) {
		t.Errorf("SDK reader data %s, want %s", got.Data(), data)
	}
	// And the SDK's writer's headers decode through ours.
	var body bytes.Buffer
	h, err := natsjs.WriteMsg(context.Background(), binding.ToMessage(&want), &body)
	if err != nil {
		t.Fatal(err)
	}
	back, err := events.DecodeHeaders(h)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "DecodeHeaders of the SDK writer's headers", back, want)
}

func same(t *testing.T, what string, got, want cloudevents.Event) {
	t.Helper()
	if got.SpecVersion() != want.SpecVersion() || got.ID() != want.ID() || got.Source() != want.Source() ||
		got.Type() != want.Type() || got.Subject() != want.Subject() || !got.Time().Equal(want.Time()) ||
		got.DataContentType() != want.DataContentType() {
		t.Errorf("%s: %v, want %v", what, got.Context, want.Context)
	}
	if len(got.Extensions()) != len(want.Extensions()) {
		t.Errorf("%s: extensions %v, want %v", what, got.Extensions(), want.Extensions())
	}
	for k, v := range want.Extensions() {
		if g := got.Extensions()[k]; g != v {
			t.Errorf("%s: extension %s = %v, want %v", what, k, g, v)
		}
	}
}

// The hot write path (every state change): attributes into NATS headers.
func BenchmarkEncodeHeaders(b *testing.B) {
	e, _ := sample()
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := events.EncodeHeaders(e, nats.Header{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			var body bytes.Buffer
			if _, err := natsjs.WriteMsg(ctx, binding.ToMessage(&e), &body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The read path (outbox, notify, event streams): NATS headers into an event.
func BenchmarkDecodeHeaders(b *testing.B) {
	e, data := sample()
	msg := &nats.Msg{Subject: "x", Header: nats.Header{}, Data: data}
	if err := events.EncodeHeaders(e, msg.Header); err != nil {
		b.Fatal(err)
	}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := events.DecodeHeaders(msg.Header); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			if _, err := binding.ToEvent(ctx, natsjs.NewMessage(msg)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// ChangeHeaders writes what EncodeHeaders writes for NewEvent's event,
// the event id aside (each is fresh), and the SDK reads it back.
func TestChangeHeadersAreNewEventsHeaders(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 30, 45, 123456789, time.FixedZone("x", 3600))
	for _, tp := range []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} {
		want := nats.Header{"Nats-Work-To": {"person:u 1"}}
		if err := events.EncodeHeaders(events.NewEvent(events.TypeRequestDecided, "acme", "req_1", 3, at, tp), want); err != nil {
			t.Fatal(err)
		}
		got := nats.Header{"Nats-Work-To": {"person:u 1"}}
		events.ChangeHeaders(got, events.TypeRequestDecided, "acme", "req_1", 3, at, tp)
		if id := got.Get("ce-id"); !strings.HasPrefix(id, "evt_") || id == want.Get("ce-id") {
			t.Fatalf("ce-id %q, want a fresh evt_ id", id)
		}
		got["ce-id"] = want["ce-id"]
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ChangeHeaders wrote\n%v\nEncodeHeaders writes\n%v", got, want)
		}
		e, err := binding.ToEvent(context.Background(), natsjs.NewMessage(&nats.Msg{Subject: "x", Header: got, Data: []byte(`{}`)}))
		if err != nil || e.Type() != events.TypeRequestDecided || events.EventRevision(*e) != 3 {
			t.Fatalf("the SDK reads %v, %v", e, err)
		}
	}
}

// PeekChange reads what the outbox needs of a stored change without
// decoding its event, and agrees with the full decode; a header set
// without an event's required attributes is no change.
func TestPeekChange(t *testing.T) {
	for _, tc := range []struct {
		typ, subject string
		rev          uint64
	}{{events.TypeRequestDecided, "req_1", 3}, {events.TypeGrantRevoked, "grt_1", 1}, {events.TypeGrantCreated, "grt 2%", 0}} {
		h := nats.Header{"Nats-Work-To": {"person:u1"}}
		events.ChangeHeaders(h, tc.typ, "acme", tc.subject, tc.rev, time.Now(), "")
		c, ok := events.PeekChange(h)
		e, err := events.DecodeHeaders(h)
		if !ok || err != nil || c.Type != tc.typ || c.Subject != tc.subject || c.Tenant != "acme" || c.Revision != tc.rev {
			t.Fatalf("PeekChange = %+v, %v (decode err %v), want %+v", c, ok, err, tc)
		}
		if c.MsgID() != events.EventMsgID(e) {
			t.Errorf("MsgID %q, EventMsgID %q", c.MsgID(), events.EventMsgID(e))
		}
		out := nats.Header{}
		events.CopyEventHeaders(out, h)
		if out.Get("Nats-Work-To") != "" || out.Get("Content-Type") != "application/json" || len(out) != len(h)-1 {
			t.Errorf("CopyEventHeaders copied %v from %v", out, h)
		}
		for _, drop := range []string{"ce-specversion", "ce-id", "ce-source", "ce-type", "ce-subject", "ce-tenant"} {
			partial := nats.Header{}
			events.CopyEventHeaders(partial, h)
			delete(partial, drop)
			if c, ok := events.PeekChange(partial); ok {
				t.Errorf("without %s: PeekChange = %+v, ok", drop, c)
			}
		}
	}
}

// The headers of every state change's write (ChangeHeaders), into a
// fresh header as each write makes.
//
//	go test -run '^$' -bench ChangeHeaders -benchmem ./events/
func BenchmarkChangeHeaders(b *testing.B) {
	b.ReportAllocs()
	at := time.Now()
	for b.Loop() {
		h := make(nats.Header, 12)
		events.ChangeHeaders(h, events.TypeRequestDecided, "acme", "req_01JABCDEFGHJKMNPQRSTVWXYZ0", 2, at, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	}
}

// What the outbox and the audit writer read of every stored change.
//
//	go test -run '^$' -bench PeekChange -benchmem ./events/
func BenchmarkPeekChange(b *testing.B) {
	b.ReportAllocs()
	h := make(nats.Header, 12)
	events.ChangeHeaders(h, events.TypeRequestDecided, "acme", "req_01JABCDEFGHJKMNPQRSTVWXYZ0", 2, time.Now(), "")
	for b.Loop() {
		if _, ok := events.PeekChange(h); !ok {
			b.Fatal("not a change")
		}
	}
}
