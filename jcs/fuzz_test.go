package jcs

import (
	"bytes"
	"encoding/json"
	"testing"
)

// jcsSeeds are today's inputs: plain objects, and the edges strict JSON
// must refuse or keep exact (lone surrogates, duplicate keys, huge and odd numbers, invalid
// UTF-8, escapes, deep nesting).
var jcsSeeds = []string{
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`,
	`{"payment_id":"payment_123","amount":4900,"currency":"GBP"}`,
	`{"s":"\ud800"}`, `{"s":"\udc00\ud800"}`, `{"s":"\ud83d\ude00"}`, `{"\ud800":1}`,
	`{"a":1,"a":2}`, `{"o":{"k":1,"k":1}}`, `{"a":1,"A":2,"\u0061b":3}`,
	`{"n":12345678901234567890}`, `{"n":1e400}`, `{"n":-0}`, `{"n":1.50}`, `{"n":2e-7}`, `{"n":9007199254740993}`,
	"{\"s\":\"\xff\"}", `{"s":"<tag> & \u2028 \u0000"}`, `{"a":1}x`, `{"a":`, ``, `[[[[[[[[[[1]]]]]]]]]]`,
	`{"€":1,"a":2,"\u00e9":3,"😀":4}`,
}

// FuzzCanonicalize: Canonicalize never panics, agrees with the
// encoding/json canonicalizer it replaced (checkOracle), and whatever it
// accepts canonicalizes deterministically to valid JSON that is its own
// canonical form.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range jcsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkOracle(t, raw)
		canon, err := Canonicalize(raw)
		if err != nil {
			return
		}
		again, err := Canonicalize(raw)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("Canonicalize(%q) not deterministic: %q then %q, %v", raw, canon, again, err)
		}
		if !json.Valid(canon) {
			t.Fatalf("Canonicalize(%q) = %q, not valid JSON", raw, canon)
		}
		re, err := Canonicalize(canon)
		if err != nil || !bytes.Equal(re, canon) {
			t.Fatalf("canonical form %q re-canonicalizes to %q, %v", canon, re, err)
		}
	})
}
