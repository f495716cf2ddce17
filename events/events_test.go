package events

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "tools.call:anything", true},
		{"tools.call:read_*", "tools.call:read_file", true},
		{"tools.call:read_*", "tools.call:write_file", false},
		{"apps.call:*/delete_*", "apps.call:conn-7/delete_user", true},
		{"apps.call:*/delete_*", "apps.call:conn-7/list_users", false},
		{"tools.call:Read_*", "tools.call:read_x", false},
		{"tools.call:a", "tools.call:ab", false},
		{"*:*", "agents.spawn:*", true},
		{"tools.call:a?c", "tools.call:abc", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestPolicy(t *testing.T) {
	p := &Policy{Allow: []string{"*"}, Deny: []string{"apps.call:*/delete_*"}}
	if !p.Permits("tools.call:issue_refund") || p.Permits("apps.call:c/delete_x") {
		t.Fatal("deny must win and allow * must allow the rest")
	}
	var none *Policy
	if none.Permits("tools.call:x") {
		t.Fatal("a member with no policy may do nothing")
	}
}

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
	if got := DecideSubject("acme", Ref{Kind: KindPerson, ID: "u-1"}); got != "countersign.acme.decide.person.u-1" {
		t.Errorf("DecideSubject = %s", got)
	}
	if got := MsgID("req_X", 12); got != "req_X:12" {
		t.Errorf("MsgID = %s", got)
	}
}

func TestIDs(t *testing.T) {
	seen := map[RequestID]bool{}
	var prev RequestID
	for i := 0; i < 1000; i++ {
		id := NewRequestID()
		if !ValidGeneratedID(string(id)) || seen[id] || id <= prev {
			t.Fatalf("id %d = %s: want fresh, valid and increasing", i, id)
		}
		seen[id], prev = true, id
	}
	at := time.Now()
	first, again := DerivedGrantID("req_a", "agt_b", at), DerivedGrantID("req_a", "agt_b", at)
	if first != again || first == DerivedGrantID("req_a", "agt_c", at) ||
		DerivedStageGrantID("req_a", "agt_b", 0, at) == DerivedStageGrantID("req_a", "agt_b", 1, at) {
		t.Fatal("derived grant ids must be stable per request and agent")
	}
	_ = strconv.Itoa
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
