package busapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// TestAnswerWithEdits: the bus's answer takes a person's edits as POST
// /v1/requests/{id} does (SPEC §5), the request.decided event carries the
// edited call, and an agent's edit or a scope other than once is 400 and
// changes nothing.
func TestAnswerWithEdits(t *testing.T) {
	e := start(t, acmeYAML)
	decided, err := e.nc.SubscribeSync(events.EventSubject("acme", events.TypeRequestDecided))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	sub := e.req("acme", "submit", tokMain, obj{"tool": "issue_refund", "arguments": obj{"amount": 4900}}).want(t, "submit", http.StatusCreated)
	id := str(sub.body["id"])
	for _, c := range []struct {
		name, token string
		body        obj
		field       string
	}{
		{"scope session", tokPerson, obj{"id": id, "expected": 0, "decision": "allow", "scope": "session", "arguments": obj{"amount": 1}}, "scope"},
		{"arguments not an object", tokPerson, obj{"id": id, "expected": 0, "decision": "allow", "arguments": []int{1}}, "arguments"},
	} {
		e.req("acme", "answer", c.token, c.body).wantProblem(t, c.name, http.StatusBadRequest, "InvalidRequest", c.field)
	}
	if got := e.req("acme", "get", tokMain, obj{"id": id}).want(t, "get", http.StatusOK); got.body["revision"] != float64(0) || got.body["edited"] != nil {
		t.Fatalf("refused edits changed the request: %s", got.raw)
	}

	ans := e.req("acme", "answer", tokPerson, obj{"id": id, "expected": 0, "decision": "allow", "arguments": obj{"amount": 1000}}).want(t, "answer", http.StatusOK)
	edited, _ := ans.body["edited"].(obj)
	if args, _ := json.Marshal(ans.body["arguments"]); string(args) != `{"amount":1000}` || str(edited["original_digest"]) != str(sub.body["call_digest"]) {
		t.Fatalf("answer with edits: %s", ans.raw)
	}
	m, err := decided.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ev domain.Request // binary mode: the data is the body
	if err := json.Unmarshal(m.Data, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Edited == nil || ev.CallDigest != str(ans.body["call_digest"]) || string(ev.Arguments) != `{"amount":1000}` {
		t.Errorf("request.decided event does not carry the edit: %s", m.Data)
	}
}
