package wire_test

import (
	"errors"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/jcs"
	"github.com/countersign/countersign/problem"
)

// A field name matches only byte-for-byte (SPEC §5): names that
// encoding/json would fold onto a field (case, 'ſ' U+017F for 's', the
// Kelvin sign U+212A for 'k') are unknown fields, refused with the key as
// the field, at any depth; keys of free-form values are not checked.
func TestDecodeExactNames(t *testing.T) {
	cases := []struct {
		name, body, field string
		v                 any
	}{
		{"DECISION beside decision", `{"expected":0,"decision":"deny","DECISION":"allow"}`, "DECISION", new(approvals.AnswerInput)},
		{"Decision alone", `{"expected":0,"Decision":"allow"}`, "Decision", new(approvals.AnswerInput)},
		{"EXPECTED", `{"EXPECTED":0,"decision":"allow"}`, "EXPECTED", new(approvals.AnswerInput)},
		{"Tool", `{"Tool":"x","arguments":{}}`, "Tool", new(domain.Submission)},
		{"Arguments", `{"tool":"x","Arguments":{}}`, "Arguments", new(domain.Submission)},
		{"long s in session", `{"tool":"x","arguments":{},"ſession":"s"}`, "ſession", new(domain.Submission)},
		{"escaped long s", `{"tool":"x","arguments":{},"\u017fession":"s"}`, "ſession", new(domain.Submission)},
		{"Kelvin sign", `{"tool":"x","arguments":{},"\u212aind":"s"}`, "\u212aind", new(domain.Submission)},
		{"nested Kelvin sign", `{"tool":"x","arguments":{},"subject":{"\u212aind":"shell"}}`, "subject.\u212aind", new(domain.Submission)},
		{"nested ID", `{"tool":"x","arguments":{},"connection":{"ID":"c","revision":1}}`, "connection.ID", new(domain.Submission)},
		{"capability Target", `{"capability":{"action":"tools.call","Target":"x"},"arguments":{}}`, "capability.Target", new(domain.Submission)},
		{"unknown", `{"tool":"x","arguments":{},"colour":"red"}`, "colour", new(domain.Submission)},
		{"control character", `{"tool":"x","arguments":{},"a\u0001":1}`, "a\x01", new(domain.Submission)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := wire.Decode([]byte(c.body), c.v)
			var p *problem.Error
			if !errors.As(err, &p) || p.Status != 400 || p.Code != "InvalidRequest" || p.Field != c.field {
				t.Fatalf("Decode(%s) = %v, want 400 InvalidRequest field %q", c.body, err, c.field)
			}
		})
	}
}

// Keys inside arguments (a json.RawMessage) are the tool's own: any case,
// any script.
func TestDecodeFreeKeys(t *testing.T) {
	body := `{"tool":"x","arguments":{"Tool":1,"ſession":{"DECISION":[{"K":"\""}]},"a\"b":2},"session":"s"}`
	var sub domain.Submission
	if _, err := wire.Decode([]byte(body), &sub); err != nil {
		t.Fatalf("Decode(%s) = %v, want nil", body, err)
	}
	if got, want := sub.Session, "s"; got != want {
		t.Fatalf("session = %q, want %q", got, want)
	}
}

// NoFoldedNames ignores keys that fold onto no field (a third party's
// payload) but refuses one that folds onto a field without being it, at
// any depth.
func TestNoFoldedNames(t *testing.T) {
	type item struct {
		Kind string `json:"kind"`
	}
	type payload struct {
		Type  string `json:"type"`
		Items []item `json:"items"`
	}
	for _, tc := range []struct {
		body, field string
	}{
		{`{"type":"a","team":{"Type":1},"items":[{"kind":"k","extra":true}]}`, ""},
		{`{"TYPE":"a"}`, "TYPE"},
		{`{"type":"a","items":[{"kind":"k"},{"\u212aind":"x"}]}`, "items.\u212aind"},
	} {
		canon, err := jcs.Canonicalize([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		err = wire.NoFoldedNames(canon, new(payload))
		got, p := "", (*problem.Error)(nil)
		if errors.As(err, &p) {
			got = p.Field
		}
		if got != tc.field || err != nil && p == nil {
			t.Errorf("NoFoldedNames(%s) = %v, want field %q", tc.body, err, tc.field)
		}
	}
}

// A body the canonicalizer refuses is an InvalidRequest about body whose
// detail names the fault for people, without the Go package's prefix.
func TestDecodeRefusalDetail(t *testing.T) {
	_, err := wire.Decode([]byte(`{"tool":"x","tool":"y"}`), new(domain.Submission))
	var p *problem.Error
	if !errors.As(err, &p) || p.Field != "body" || p.Detail != `duplicate object key: "tool"` {
		t.Fatalf("Decode = %#v, want field body, detail duplicate object key: \"tool\"", err)
	}
}
