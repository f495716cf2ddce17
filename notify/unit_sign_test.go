package notify

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// ParseSecret: a whsec_ secret is base64 of a non-empty key; anything
// else non-empty is the key as written; empty is refused.
func TestParseSecretEdges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the key; "" refused
	}{
		{"whsec_" + base64.StdEncoding.EncodeToString([]byte("key bytes")), "key bytes"},
		{"plain-secret", "plain-secret"},
		{"whsec", "whsec"},
		{"WHSEC_abc", "WHSEC_abc"},
		{"", ""},
		{"whsec_", ""},
		{"whsec_not base64!", ""},
		{"whsec_" + base64.RawStdEncoding.EncodeToString([]byte("ab")), ""}, // unpadded
	} {
		key, err := ParseSecret(tc.in)
		switch {
		case tc.want == "" && !errors.Is(err, ErrConfig):
			t.Errorf("ParseSecret(%q) = %q, %v, want ErrConfig", tc.in, key, err)
		case tc.want != "" && (err != nil || string(key) != tc.want):
			t.Errorf("ParseSecret(%q) = %q, %v, want %q", tc.in, key, err, tc.want)
		}
	}
}

// The signature covers the id, the timestamp and the body: a change to any
// one of them is another signature; the timestamp is whole seconds.
func TestSignCoversIDTimeAndBody(t *testing.T) {
	at := time.Unix(1700000000, 999_000_000)
	sig := func(key, id string, at time.Time, body string) http.Header {
		h := http.Header{}
		Sign(h, []byte(key), id, at, []byte(body))
		return h
	}
	base := sig("k", "msg_1", at, `{"a":1}`)
	if got := base.Get(HeaderTimestamp); got != strconv.FormatInt(at.Unix(), 10) {
		t.Errorf("timestamp %q, want whole seconds %d", got, at.Unix())
	}
	if base.Get(HeaderID) != "msg_1" {
		t.Errorf("webhook-id %q", base.Get(HeaderID))
	}
	if s := base.Get(HeaderSignature); len(s) < 4 || s[:3] != "v1," {
		t.Fatalf("signature %q is not v1,<base64>", s)
	}
	if got := sig("k", "msg_1", at.Add(-500*time.Millisecond), `{"a":1}`); got.Get(HeaderSignature) != base.Get(HeaderSignature) {
		t.Errorf("the same second signed differently")
	}
	for name, h := range map[string]http.Header{
		"key":  sig("k2", "msg_1", at, `{"a":1}`),
		"id":   sig("k", "msg_2", at, `{"a":1}`),
		"time": sig("k", "msg_1", at.Add(time.Second), `{"a":1}`),
		"body": sig("k", "msg_1", at, `{"a":2}`),
		// the id and timestamp are separated from the body
		"split": sig("k", "msg_", at, `1.`+strconv.FormatInt(at.Unix(), 10)+`.{"a":1}`),
	} {
		if h.Get(HeaderSignature) == base.Get(HeaderSignature) {
			t.Errorf("another %s, the same signature", name)
		}
	}
}
