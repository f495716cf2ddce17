package outbox

import (
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// storedHeaders are the headers a state write carries: its CloudEvent,
// and the state's own headers the derived messages must not copy.
func storedHeaders(typ string, rev uint64) (nats.Header, events.Change) {
	h := nats.Header{}
	events.ChangeHeaders(h, typ, "acme", "req_1", rev, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "")
	h.Set(events.HeaderWorkTo, "person.u-1")
	h.Set("KV-Operation", "PUT")
	h.Set(nats.ExpectedLastSubjSeqHdr, "7")
	c, _ := events.PeekChange(h)
	return h, c
}

// workMsg carries the stored data and the CloudEvent headers as they are,
// nothing of the state write's own (an expected-sequence header copied
// would refuse the republish), and the change's Nats-Msg-Id.
func TestWorkMsg(t *testing.T) {
	h, c := storedHeaders(events.TypeRequestCreated, 3)
	m := workMsg("countersign.acme.decide.person.u-1", []byte(`{"id":"req_1"}`), h, c)
	if m.Subject != "countersign.acme.decide.person.u-1" || string(m.Data) != `{"id":"req_1"}` {
		t.Errorf("subject %q data %s", m.Subject, m.Data)
	}
	if got, want := m.Header.Get(nats.MsgIdHdr), "req_1:3"; got != want {
		t.Errorf("Nats-Msg-Id %q, want %q", got, want)
	}
	for k, vs := range h {
		copied := m.Header[k]
		isEvent := strings.HasPrefix(k, "ce-") || k == "Content-Type"
		switch {
		case isEvent && (len(copied) != 1 || copied[0] != vs[0]):
			t.Errorf("event header %s: %v, want %v", k, copied, vs)
		case !isEvent && len(copied) != 0:
			t.Errorf("the state's header %s was copied: %v", k, copied)
		}
	}
	if c2, ok := events.PeekChange(m.Header); !ok || c2 != c {
		t.Errorf("the derived message's change %+v %v, want %+v", c2, ok, c)
	}
}

// A grant's change is deduplicated by its grant id and whether it is the
// revocation, not by a revision.
func TestWorkMsgOfAGrant(t *testing.T) {
	for typ, want := range map[string]string{
		events.TypeGrantCreated: events.GrantMsgID("g-1", false),
		events.TypeGrantRevoked: events.GrantMsgID("g-1", true),
	} {
		h := nats.Header{}
		events.ChangeHeaders(h, typ, "acme", "g-1", 2, time.Now(), "")
		c, ok := events.PeekChange(h)
		if !ok {
			t.Fatal("no change")
		}
		if got := workMsg(events.EventSubject("acme", typ), nil, h, c).Header.Get(nats.MsgIdHdr); got != want {
			t.Errorf("%s: Nats-Msg-Id %q, want %q", typ, got, want)
		}
	}
	if events.GrantMsgID("g-1", false) == events.GrantMsgID("g-1", true) {
		t.Error("a grant's creation and revocation share an id: the revocation would be dropped")
	}
}

// The shadowed event of a creation goes to request.shadowed under its own
// event id and Nats-Msg-Id, so the creation's dedup never drops it.
func TestShadowedMsg(t *testing.T) {
	h, c := storedHeaders(events.TypeRequestCreated, 0)
	m := shadowedMsg([]byte(`{}`), h, c)
	if want := events.EventSubject("acme", events.TypeRequestShadowed); m.Subject != want {
		t.Errorf("subject %q, want %q", m.Subject, want)
	}
	if got := m.Header.Get(nats.MsgIdHdr); got != c.MsgID()+".shadowed" || got == c.MsgID() {
		t.Errorf("Nats-Msg-Id %q, want %q", got, c.MsgID()+".shadowed")
	}
	sc, ok := events.PeekChange(m.Header)
	if !ok || sc.Type != events.TypeRequestShadowed || sc.Subject != "req_1" {
		t.Errorf("the shadowed change %+v %v", sc, ok)
	}
	if id := m.Header["ce-id"]; len(id) != 1 || id[0] == h["ce-id"][0] {
		t.Error("the shadowed event has the creation's event id")
	}
}
