package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

// bodySeeds are today's submit and answer bodies, and the edges the probes
// found.
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
}

// checkBody holds parseBody's contract for one accepted body: the hash is
// the SHA-256 of the canonical form, which is deterministic and its own
// canonical form.
func checkBody(t *testing.T, raw []byte, sum string) {
	canon, err := events.Canonicalize(raw)
	if err != nil {
		t.Fatalf("parseBody accepted %q, which does not canonicalize: %v", raw, err)
	}
	h := sha256.Sum256(canon)
	if sum != hex.EncodeToString(h[:]) {
		t.Fatalf("parseBody(%q) hash %s is not the canonical form's", raw, sum)
	}
	if re, err := events.Canonicalize(canon); err != nil || !bytes.Equal(re, canon) {
		t.Fatalf("canonical form %q re-canonicalizes to %q, %v", canon, re, err)
	}
}

// FuzzSubmitBody: the submit body decoder (strict JSON, then JCS) never
// panics; a body it accepts has the same canonical form every time, and so
// do its arguments.
func FuzzSubmitBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var sub events.Submission
		sum, err := approvals.Decode(raw, &sub)
		if err != nil {
			return
		}
		checkBody(t, raw, sum)
		if len(sub.Arguments) > 0 {
			if _, err := events.Canonicalize(sub.Arguments); err != nil {
				t.Fatalf("accepted arguments %q do not canonicalize: %v", sub.Arguments, err)
			}
		}
	})
}

// FuzzAnswerBody: the answer decoder never panics; what it accepts either
// fails Validate or is an answer with a known decision and scope.
func FuzzAnswerBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, agent bool) {
		var in approvals.AnswerInput
		sum, err := approvals.Decode(raw, &in)
		if err != nil {
			return
		}
		checkBody(t, raw, sum)
		c := approvals.Caller{Principal: events.Ref{Kind: events.KindPerson, ID: "u-1"}}
		if agent {
			c.Principal = events.Ref{Kind: events.KindAgent, ID: "agt_main"}
		}
		if in.Validate(c) != nil {
			return
		}
		switch {
		case in.Expected == nil:
			t.Fatalf("%q validated without expected", raw)
		case in.Decision != approvals.DecisionAllow && in.Decision != approvals.DecisionDeny && in.Decision != approvals.DecisionAbstain:
			t.Fatalf("%q validated with decision %q", raw, in.Decision)
		case events.ScopeRank(in.Scope) == 0:
			t.Fatalf("%q validated with scope %q", raw, in.Scope)
		case in.Decision == approvals.DecisionAbstain && !agent:
			t.Fatalf("%q: a person abstained", raw)
		}
	})
}
