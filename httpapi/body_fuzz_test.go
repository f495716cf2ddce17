package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/jcs"
	"github.com/countersign/countersign/problem"
)

// bodySeeds are today's submit and answer bodies, and the edges strict
// decoding must refuse or keep exact.
var bodySeeds = []string{
	`{"tool":"issue_refund","arguments":{"payment_id":"payment_123","amount":4900,"currency":"GBP"},"reason":"Duplicate charge."}`,
	`{"capability":{"action":"apps.call","target":"conn-7/list_files"},"arguments":{},"connection":{"id":"conn-7","revision":3}}`,
	`{"tool":"x","arguments":{"s":"\ud800"}}`, `{"tool":"x","arguments":{"a":1,"a":2}}`, `{"tool":"x","tool":"y","arguments":{}}`,
	`{"tool":"x","arguments":{"n":12345678901234567890}}`, `{"tool":"x","arguments":{"n":1e999}}`,
	"{\"tool\":\"x\",\"arguments\":{\"s\":\"\xff\"}}", `{"tool":"x","arguments":[]}`, `{"tool":"x","arguments":{},"colour":"red"}`,
	`{"tool":"x","arguments":{"html":"<b>&</b>"},"timeout":"30m","subject":{"kind":"shell","command":"ls"}}`,
	`{"expected":0,"decision":"allow","scope":"session","reason":"ok","rule":"Refunds are fine."}`,
	`{"expected":-1,"decision":"deny"}`, `{"expected":1.5,"decision":"deny"}`, `{"expected":18446744073709551616,"decision":"deny"}`,
	`{"decision":"abstain"}`, `{"expected":0,"decision":"allow","denny":1}`, `{"expected":0,"decision":"allow","expected":1}`,
	`[]`, ``, `{`, `null`,
	// Names encoding/json would fold onto a field: case, U+017F for 's',
	// U+212A (Kelvin sign) for 'k'.
	`{"expected":0,"decision":"deny","DECISION":"allow"}`, `{"expected":0,"Decision":"allow"}`,
	`{"Tool":"x","arguments":{}}`, `{"tool":"x","Arguments":{}}`, `{"tool":"x","arguments":{},"ſession":"s"}`,
	`{"tool":"x","arguments":{},"\u017fession":"s"}`, `{"tool":"x","arguments":{},"subject":{"\u212aind":"shell","command":"ls"}}`,
	`{"tool":"x","arguments":{},"connection":{"ID":"c","revision":1}}`, `{"capability":{"ACTION":"tools.call","target":"x"},"arguments":{}}`,
	`{"tool":"x","arguments":{"Tool":1,"ſession":{"K":2}},"session":"s"}`,
}

// checkBody holds parseBody's contract for one accepted body: the hash is
// the SHA-256 of the canonical form, which is deterministic and its own
// canonical form.
func checkBody(t *testing.T, raw []byte, sum string) {
	canon, err := jcs.Canonicalize(raw)
	if err != nil {
		t.Fatalf("parseBody accepted %q, which does not canonicalize: %v", raw, err)
	}
	h := sha256.Sum256(canon)
	if sum != hex.EncodeToString(h[:]) {
		t.Fatalf("parseBody(%q) hash %s is not the canonical form's", raw, sum)
	}
	if re, err := jcs.Canonicalize(canon); err != nil || !bytes.Equal(re, canon) {
		t.Fatalf("canonical form %q re-canonicalizes to %q, %v", canon, re, err)
	}
}

// FuzzSubmitBody: the submit body decoder (strict JSON, then JCS) never
// panics; a body it accepts has the same canonical form every time, and so
// do its arguments; its keys are exactly field names, and any of them
// changed only by case or folding is refused.
func FuzzSubmitBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var sub domain.Submission
		sum, err := wire.Decode(raw, &sub)
		if err != nil {
			return
		}
		checkBody(t, raw, sum)
		checkExactNames(t, raw, reflect.TypeFor[domain.Submission]())
		if len(sub.Arguments) > 0 {
			if _, err := jcs.Canonicalize(sub.Arguments); err != nil {
				t.Fatalf("accepted arguments %q do not canonicalize: %v", sub.Arguments, err)
			}
		}
	})
}

// FuzzAnswerBody: the answer decoder never panics; what it accepts has
// exactly its field names (as FuzzSubmitBody) and either fails Validate or
// is an answer with a known decision and scope.
func FuzzAnswerBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, agent bool) {
		var in approvals.AnswerInput
		sum, err := wire.Decode(raw, &in)
		if err != nil {
			return
		}
		checkBody(t, raw, sum)
		checkExactNames(t, raw, reflect.TypeFor[approvals.AnswerInput]())
		c := approvals.Caller{Principal: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}}
		if agent {
			c.Principal = domain.Ref{Kind: domain.KindAgent, ID: "agt_main"}
		}
		if in.Validate(c) != nil {
			return
		}
		switch {
		case in.Expected == nil:
			t.Fatalf("%q validated without expected", raw)
		case in.Decision != approvals.DecisionAllow && in.Decision != approvals.DecisionDeny && in.Decision != approvals.DecisionAbstain:
			t.Fatalf("%q validated with decision %q", raw, in.Decision)
		case domain.ScopeRank(in.Scope) == 0:
			t.Fatalf("%q validated with scope %q", raw, in.Scope)
		case in.Decision == approvals.DecisionAbstain && !agent:
			t.Fatalf("%q: a person abstained", raw)
		}
	})
}

// checkExactNames holds the exact-name rule (SPEC §5) for a body of type
// typ that Decode accepted: every key of its canonical form, down through
// typ's structs, is byte-for-byte a field's JSON name; and each top-level
// key turned into a name encoding/json folds onto it (upper case, 'ſ' for
// 's', U+212A for 'k') makes the body a 400 naming that key.
func checkExactNames(t *testing.T, raw []byte, typ reflect.Type) {
	canon, _ := jcs.Canonicalize(raw)
	var doc any
	if err := json.Unmarshal(canon, &doc); err != nil {
		t.Fatalf("canonical form %q: %v", canon, err)
	}
	keysAreNames(t, raw, doc, typ)
	var members map[string]json.RawMessage
	_ = json.Unmarshal(canon, &members)
	for key, value := range members {
		for _, folded := range foldings(key) {
			body := renamed(members, key, folded, value)
			_, err := wire.Decode(body, reflect.New(typ).Interface())
			var p *problem.Error
			if !errors.As(err, &p) || p.Status != 400 || p.Field != folded {
				t.Fatalf("%q with %q for %q: Decode = %v, want 400 about %q", raw, folded, key, err, folded)
			}
		}
	}
}

// keysAreNames checks v's keys against typ's JSON names, down through
// typ's struct, pointer and slice fields.
func keysAreNames(t *testing.T, raw []byte, v any, typ reflect.Type) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		if items, ok := v.([]any); ok && typ.Kind() == reflect.Slice {
			for _, it := range items {
				keysAreNames(t, raw, it, typ.Elem())
			}
			return
		}
		typ = typ.Elem()
	}
	obj, ok := v.(map[string]any)
	if typ.Kind() != reflect.Struct || !ok {
		return
	}
	for key, value := range obj {
		f, found := fieldNamed(typ, key)
		if !found {
			t.Fatalf("Decode accepted %q whose key %q is no field name of %v", raw, key, typ)
		}
		keysAreNames(t, raw, value, f.Type)
	}
}

// fieldNamed finds typ's field whose JSON name is exactly name.
func fieldNamed(typ reflect.Type, name string) (reflect.StructField, bool) {
	for f := range typ.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" {
			tag = f.Name
		}
		if f.IsExported() && tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// foldings are names that encoding/json matches to key but that differ
// from it.
func foldings(key string) []string {
	var out []string
	for _, f := range []string{strings.ToUpper(key), strings.ToUpper(key[:min(1, len(key))]) + key[min(1, len(key)):],
		strings.ReplaceAll(key, "s", "\u017f"), strings.ReplaceAll(key, "k", "\u212a")} {
		if f != key && !strings.Contains(f, `"`) {
			out = append(out, f)
		}
	}
	return out
}

// renamed is the object members with key renamed to folded.
func renamed(members map[string]json.RawMessage, key, folded string, value json.RawMessage) []byte {
	m := make(map[string]json.RawMessage, len(members))
	for k, v := range members {
		m[k] = v
	}
	delete(m, key)
	m[folded] = value
	b, _ := json.Marshal(m)
	return b
}
