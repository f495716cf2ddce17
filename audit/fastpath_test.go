package audit

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// The writer's seal of canonical data is Seal's line and hash: written
// directly where its members allow it, through Seal where a string needs
// escapes or the time or seq the general encoding.
func TestSealOfCanonicalDataIsSeal(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))
	data, ok := canonicalData([]byte(`{"b": 1.50, "a": ["<>&", "\u00e9", 1e3], "c": {"z": null, "y": true}}`))
	if !ok {
		t.Fatal("canonicalData refused a record")
	}
	base := Entry{Seq: 12, At: at, Tenant: "acme", Type: "dev.countersign.request.decided",
		Actor: Actor{Kind: "person", ID: "u-1"}, Subject: "req_1", Prev: ZeroHash, Data: data}
	for _, c := range []struct {
		name   string
		edit   func(*Entry)
		direct bool
	}{
		{"plain", func(*Entry) {}, true},
		{"non-ASCII", func(e *Entry) { e.Actor.ID, e.Subject = "é\u2028<&>", "ü" }, true},
		{"a quote", func(e *Entry) { e.Subject = `a"b` }, false},
		{"a backslash", func(e *Entry) { e.Actor.Kind = `a\b` }, false},
		{"a control character", func(e *Entry) { e.Tenant = "a\tb" }, false},
		{"invalid UTF-8", func(e *Entry) { e.Type = "a\xffb" }, false},
		{"a seq past 2^53", func(e *Entry) { e.Seq = 1<<53 + 1 }, false},
		{"a year past 9999", func(e *Entry) { e.At = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
	} {
		fast, slow := base, base
		c.edit(&fast)
		c.edit(&slow)
		_, direct := appendSealCanonical(nil, &Entry{Seq: fast.Seq, At: fast.At, Tenant: fast.Tenant, Type: fast.Type,
			Actor: fast.Actor, Subject: fast.Subject, Prev: fast.Prev, Data: fast.Data})
		line, err := appendSeal(nil, &fast, true)
		want, werr := Seal(&slow)
		if direct != c.direct || (err != nil) != (werr != nil) || !bytes.Equal(line, want) || fast.Hash != slow.Hash || !fast.At.Equal(slow.At) {
			t.Errorf("%s: written directly %v (want %v): %s %s %v\nSeal: %s %s %v", c.name, direct, c.direct, line, fast.Hash, err, want, slow.Hash, werr)
		}
	}
}

// canonicalData keeps what the log kept before it: no JSON as a string
// of its bytes, JSON in RFC 8785 form, and JSON the canonicalizer refuses
// as it is (seal then wraps it).
func TestCanonicalData(t *testing.T) {
	for _, c := range []struct {
		in, want  string
		canonical bool
	}{
		{`{"b":1, "a":[1.0,"\u00e9"]}`, `{"a":[1,"é"],"b":1}`, true},
		{``, `""`, true},
		{`not json <&>`, `"not json <&>"`, true},
		{`{"n":1e400}`, `{"n":1e400}`, false},
	} {
		got, canonical := canonicalData([]byte(c.in))
		if string(got) != c.want || canonical != c.canonical {
			t.Errorf("%q: got %s, %v; want %s, %v", c.in, got, canonical, c.want, c.canonical)
		}
	}
	e := Entry{Seq: 1, At: time.Unix(0, 0), Tenant: "acme", Type: "t", Actor: Actor{Kind: "system"}, Prev: ZeroHash}
	e.Data, _ = canonicalData([]byte(`{"n":1e400}`))
	if line, err := appendSeal(nil, &e, false); err != nil || !bytes.Contains(line, []byte(`"data":{"unparsed":"{\"n\":1e400}"}`)) {
		t.Fatalf("got %s, %v; want the data kept as a string", line, err)
	}
}

// member finds a top-level member's value as written, past nested
// objects, arrays, strings holding braces, quotes and commas, and
// whitespace, as a full decode does.
func TestMemberIsTheDecodedValue(t *testing.T) {
	docs := []string{
		`{"a":{"b":"}","c":[1,{"d":"]"}]},"agent":"x\"y","e":-1.5e3,"f":true,"g":null,"h":"\\","i":[]}`,
		"{ \"a\" : [ 1 , 2 ] ,\n\t\"agent\" : \"z\" , \"b\" : { \"c\" : \"d\" } , \"e\" : 7 }",
		`{}`,
		`{"a":1,"agent":"q","f":false}`,
		`{"decision":null,"approver":{"kind":"person","id":"u-1"}}`,
	}
	for _, d := range docs {
		var want map[string]json.RawMessage
		mustUnmarshal(t, []byte(d), &want)
		for _, k := range []string{"a", "agent", "b", "c", "e", "f", "g", "h", "i", "decision", "approver", "missing"} {
			got := member([]byte(d), k)
			if w, ok := want[k]; string(got) != string(bytes.TrimSpace(w)) || (got == nil) == ok {
				t.Errorf("%s: member %q = %q; want %q", d, k, got, w)
			}
		}
	}
	for _, d := range []string{`[{"agent":"x"}]`, `"agent"`, `{"x":{"agent":"y"}}`} {
		if got := member([]byte(d), "agent"); got != nil {
			t.Errorf("%s: got %q; want none (no top-level member)", d, got)
		}
	}
}

// actorOf names who made a change from the record's members.
func TestActorOf(t *testing.T) {
	for _, c := range []struct {
		typ, data string
		want      Actor
	}{
		{events.TypeRequestCreated, `{"agent":"agt_main","decision":{"by":{"kind":"person","id":"u-1"}}}`, Actor{Kind: domain.KindAgent, ID: "agt_main"}},
		{events.TypeRequestClaimed, `{"agent":"agt_main","approver":{"id":"u-2","kind":"person"}}`, Actor{Kind: "person", ID: "u-2"}},
		{events.TypeRequestClaimed, `{"agent":"agt_main","approver":null}`, Actor{Kind: "system"}},
		{events.TypeGrantCreated, `{"created_by":{"id":"u-3","kind":"person"}}`, Actor{Kind: "person", ID: "u-3"}},
		{events.TypeRequestDecided, `{"approver":{"id":"u-2","kind":"person"},"decision":{"by":{"id":"agt_r","kind":"agent"},"status":"approved"}}`, Actor{Kind: "agent", ID: "agt_r"}},
		{events.TypeRequestDecided, `{"decision":{"by":{},"status":"expired"}}`, Actor{Kind: "system"}},
		{events.TypeRequestDecided, `{"decision":null}`, Actor{Kind: "system"}},
		{events.TypeGrantRevoked, `{"created_by":{"id":"u-3","kind":"person"}}`, Actor{Kind: "system"}},
		{events.TypeRequestCreated, `{"agent":"agt_\u006dain \"x\""}`, Actor{Kind: domain.KindAgent, ID: `agt_main "x"`}},
		{events.TypeRequestCreated, `{"agent":7}`, Actor{Kind: domain.KindAgent}},
		{events.TypeRequestDecided, `{"decision":{"status":"denied","by":{"kind":"per\u0073on","id":"u-\\1"}}}`, Actor{Kind: "person", ID: `u-\1`}},
		{events.TypeRequestDecided, `{"decision":{"by":{"kind":1,"id":"u-1"}}}`, Actor{Kind: "system"}},
		{events.TypeRequestClaimed, `{"approver":{"kind":"person"}}`, Actor{Kind: "person"}},
	} {
		if got := actorOf(c.typ, []byte(c.data)); got != c.want {
			t.Errorf("%s %s: got %+v; want %+v", c.typ, c.data, got, c.want)
		}
	}
}
