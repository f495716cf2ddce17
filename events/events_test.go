package events

import (
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/nats-io/nats.go"
)

func TestCloudEventHeadersRoundTrip(t *testing.T) {
	at := time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC)
	e := NewEvent(TypeRequestDecided, "acme", "req_01JC000000000000000000000", 3, at, "00-abc-def-01")
	h := nats.Header{}
	if err := EncodeHeaders(e, h); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"ce-specversion": "1.0", "ce-type": TypeRequestDecided, "ce-source": "/countersign/acme",
		"ce-id": e.ID(), "ce-subject": "req_01JC000000000000000000000", "ce-tenant": "acme",
		"ce-revision": "3", "ce-traceparent": "00-abc-def-01", "ce-time": "2026-09-16T12:00:00Z",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	back, err := DecodeHeaders(h)
	if err != nil || back.ID() != e.ID() || back.Type() != e.Type() || !back.Time().Equal(at) {
		t.Fatalf("DecodeHeaders = %v, %v", back, err)
	}
}

func TestPercentEncoding(t *testing.T) {
	for _, s := range []string{"plain", "with space", `quote"`, "100%", "é€😀", "ctl\x01"} {
		enc := percentEncode(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c <= 0x20 || c >= 0x7f || c == '"' {
				t.Errorf("percentEncode(%q) = %q keeps byte %q", s, enc, c)
			}
		}
		if dec, err := percentDecode(enc); err != nil || dec != s {
			t.Errorf("round trip of %q = %q, %v", s, dec, err)
		}
	}
}

func TestSubjects(t *testing.T) {
	if got := EventSubject("acme", TypeRequestCreated); got != "countersign.acme.events.request.created" {
		t.Errorf("EventSubject = %s", got)
	}
	if got := DecideSubject("acme", domain.Ref{Kind: domain.KindPerson, ID: "u-1"}); got != "countersign.acme.decide.person.u-1" {
		t.Errorf("DecideSubject = %s", got)
	}
	if got := MsgID("req_X", 12); got != "req_X:12" {
		t.Errorf("MsgID = %s", got)
	}
	if got, want := ReviewSubject("acme", "agt_main"), "countersign.acme.review.agt_main"; got != want {
		t.Errorf("ReviewSubject = %q, want %q", got, want)
	}
}

func TestAPISubjects(t *testing.T) {
	subj := APISubject("acme", OpSubmit)
	if subj != "countersign.acme.api.submit" {
		t.Errorf("APISubject = %q", subj)
	}
	if got, ok := TenantOfAPISubject(subj); !ok || got != "acme" {
		t.Errorf("TenantOfAPISubject(%q) = %q, %v", subj, got, ok)
	}
	for _, bad := range []string{"countersign.acme.events.x", "countersign..api.get", "other.acme.api.get", "countersign.acme.api.get.more"} {
		if _, ok := TenantOfAPISubject(bad); ok {
			t.Errorf("TenantOfAPISubject(%q) accepted", bad)
		}
	}
	if f := APIFilter(OpGet); f != "countersign.*.api.get" {
		t.Errorf("APIFilter = %q", f)
	}
}
