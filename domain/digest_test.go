package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/countersign/countersign/jcs"
)

func TestCallDigestIsStableAcrossFormatting(t *testing.T) {
	b := CallBinding{Tenant: "acme", Agent: "agt_p", Capability: Capability{Action: "tools.call", Target: "issue_refund"}}
	b.Arguments = []byte(`{"amount": 4900, "currency":"GBP"}`)
	d1, err := CallDigest(b)
	if err != nil {
		t.Fatal(err)
	}
	b.Arguments = []byte(`{"currency":"GBP","amount":4900.0}`)
	d2, _ := CallDigest(b)
	if d1 != d2 || !strings.HasPrefix(d1, "sha256:") || len(d1) != len("sha256:")+64 {
		t.Fatalf("digests %s and %s: want equal sha256:<64 hex>", d1, d2)
	}
	b.Connection = &Connection{ID: "conn-7", Revision: 2}
	if d3, _ := CallDigest(b); d3 == d1 {
		t.Fatal("a connection revision must change the digest")
	}
	b.Connection, b.Session = nil, "ses-1"
	if d4, _ := CallDigest(b); d4 == d1 {
		t.Fatal("the session must change the digest")
	}
}

// The digest is over exactly the SPEC §4 object, absent strings as "".
func TestCallDigestKnownValue(t *testing.T) {
	b := CallBinding{Tenant: "acme", Agent: "agt_programmer", Capability: Capability{Action: "tools.call", Target: "issue_refund"},
		Arguments: []byte(`{"payment_id":"payment_123","amount":4900,"currency":"GBP"}`)}
	raw, _ := jcs.Canonicalize([]byte(`{"tenant":"acme","agent":"agt_programmer","session":"","turn":"","tool_call_id":"",
		"capability":{"action":"tools.call","target":"issue_refund"},
		"arguments":{"payment_id":"payment_123","amount":4900,"currency":"GBP"},"connection":null}`))
	want := "sha256:" + sha256Hex(raw)
	if got, _ := CallDigest(b); got != want {
		t.Fatalf("CallDigest = %s, want %s", got, want)
	}
}

// The hand-written canonical form equals canonicalizing the marshalled
// binding, for awkward strings and every optional part.
func TestCallDigestMatchesGenericJCS(t *testing.T) {
	bindings := []CallBinding{
		{Tenant: "acme", Agent: "agt_p", Capability: Capability{Action: "tools.call", Target: "x"}, Arguments: []byte(`{"b":[1,2.50,{"z":null}],"a":"\u00e9\n"}`)},
		{Tenant: "t", Agent: "a", Session: "ses \"1\"", Turn: "t-77", ToolCallID: "call\t9", Capability: Capability{Action: "apps.call", Target: "conn-7/send"},
			Arguments: []byte(`{}`), Connection: &Connection{ID: "conn-7", Revision: 12}},
	}
	for _, b := range bindings {
		raw, _ := json.Marshal(b)
		canon, err := jcs.Canonicalize(raw)
		if err != nil {
			t.Fatal(err)
		}
		want := "sha256:" + sha256Hex(canon)
		if got, err := CallDigest(b); err != nil || got != want {
			t.Errorf("CallDigest(%+v) = %s, %v; want %s", b, got, err, want)
		}
	}
}

// TestCallDigestMatchesOracle: CallDigest is byte for byte what the
// hand-written writer produced, for awkward strings (invalid UTF-8
// included) and every optional part.
func TestCallDigestMatchesOracle(t *testing.T) {
	for _, s := range []string{"", "acme", "ses \"1\"\t\\", "caf\u00e9 \u2028 \U0001F600", "bad \xff\xfe utf8 \xed\xa0\x80", "\x00\x1f\x7f"} {
		for _, conn := range []*Connection{nil, {ID: s, Revision: 0}, {ID: "conn-7", Revision: 1 << 60}, {ID: "c", Revision: -3}} {
			b := CallBinding{Tenant: s, Agent: s + "a", Session: s, Turn: "t" + s, ToolCallID: s,
				Capability: Capability{Action: "tools.call", Target: s}, Arguments: []byte(`{"b":[1,2.50,{"z":null}],"a":"\u00e9\n"}`), Connection: conn}
			got, err := CallDigest(b)
			want, wantErr := oldCallDigest(b)
			if got != want || errKind(err) != errKind(wantErr) {
				t.Errorf("CallDigest(%+v) = %s, %v; the oracle %s, %v", b, got, err, want, wantErr)
			}
		}
	}
	for _, args := range []string{"", "null", `{"a":1,"a":2}`, `[1e400]`, `{"s":"\ud800"}`} {
		b := CallBinding{Arguments: []byte(args)}
		got, err := CallDigest(b)
		want, wantErr := oldCallDigest(b)
		if got != want || errKind(err) != errKind(wantErr) {
			t.Errorf("CallDigest(arguments %s) = %s, %v; the oracle %s, %v", args, got, err, want, wantErr)
		}
	}
}

// TestCallDigestGolden: digests written down from the hand-written writer
// before it was replaced; a stored request's call_digest never changes.
func TestCallDigestGolden(t *testing.T) {
	want := []string{
		"sha256:c3cbf8f16ab955d1917ce2c91dedcec67c9e3e1b94401295d150d77fd7107c6c",
		"sha256:e5807dd9d75072905007241ed88264a80fa25f6325533854e55f7e96f0382284",
	}
	for i, b := range goldenBindings {
		if got, err := CallDigest(b); err != nil || got != want[i] {
			t.Errorf("CallDigest(%+v) = %s, %v; want %s", b, got, err, want[i])
		}
	}
}

var goldenBindings = []CallBinding{
	{Tenant: "acme", Agent: "agt_programmer", Capability: Capability{Action: "tools.call", Target: "issue_refund"},
		Arguments: []byte(`{"payment_id":"payment_123","amount":4900,"currency":"GBP"}`)},
	{Tenant: "acme", Agent: "agt_p", Session: "ses-1", Turn: "t-7", ToolCallID: "call_9", Capability: Capability{Action: "apps.call", Target: "conn-7/send"},
		Arguments: []byte(` {"z":[1.50,1e2,-0,"\u00e9\n"],"a":{"y":null,"x":true}} `), Connection: &Connection{ID: "conn-7", Revision: 12}},
}

// errKind names the class of a jcs error: a sentinel, or syntax for any
// other malformed JSON.
func errKind(err error) string {
	for _, s := range []error{jcs.ErrDuplicateKey, jcs.ErrInvalidUTF8, jcs.ErrNumber, jcs.ErrSurrogate, jcs.ErrDepth} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	if err != nil {
		return "syntax"
	}
	return ""
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
