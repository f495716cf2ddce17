package events

import (
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/nats-io/nats.go"
)

// ParseMsgID reads back exactly what MsgID and GrantMsgID write, and
// nothing else.
func TestParseMsgID(t *testing.T) {
	req, grt := domain.NewRequestID(), domain.NewGrantID()
	for _, s := range []string{MsgID(req, 0), MsgID(req, 17), GrantMsgID(grt, false), GrantMsgID(grt, true)} {
		id, ok := ParseMsgID(s)
		if !ok {
			t.Fatalf("ParseMsgID(%q) not ok", s)
		}
		back := MsgID(id.Request, id.Revision)
		if id.Grant != "" {
			back = GrantMsgID(id.Grant, id.Revoked)
		}
		if back != s {
			t.Errorf("ParseMsgID(%q) = %+v, which writes %q", s, id, back)
		}
	}
	for _, s := range []string{"", "42", string(req), string(req) + ":", string(req) + ":01", string(req) + ":-1", string(req) + ":1:2",
		string(req) + ":created", string(grt) + ":0", string(grt) + ":deleted", "req_x:0", "req_01JC0000000000000000000000.>:0"} {
		if id, ok := ParseMsgID(s); ok {
			t.Errorf("ParseMsgID(%q) = %+v, want not ok", s, id)
		}
	}
}

// An event read back from its stored headers names its change: the
// tenant, the revision and the Nats-Msg-Id MsgID or GrantMsgID give.
func TestEventMsgID(t *testing.T) {
	req, grt := domain.NewRequestID(), domain.NewGrantID()
	for _, c := range []struct {
		typ, subject string
		rev          uint64
		want         string
	}{
		{TypeRequestCreated, string(req), 0, MsgID(req, 0)},
		{TypeRequestEscalated, string(req), 42, MsgID(req, 42)},
		{TypeGrantCreated, string(grt), 3, GrantMsgID(grt, false)},
		{TypeGrantRevoked, string(grt), 4, GrantMsgID(grt, true)},
	} {
		h := nats.Header{}
		if err := EncodeHeaders(NewEvent(c.typ, "acme", c.subject, c.rev, time.Now(), ""), h); err != nil {
			t.Fatal(err)
		}
		e, err := DecodeHeaders(h)
		if err != nil {
			t.Fatal(err)
		}
		if got := EventMsgID(e); got != c.want {
			t.Errorf("%s: EventMsgID = %q, want %q", c.typ, got, c.want)
		}
		if EventTenant(e) != "acme" || EventRevision(e) != c.rev {
			t.Errorf("%s: tenant %q revision %d, want acme %d", c.typ, EventTenant(e), EventRevision(e), c.rev)
		}
	}
}
