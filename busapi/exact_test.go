package busapi_test

import (
	"net/http"
	"testing"
)

// TestExactFieldNames: over the bus, too, a field name matches only
// byte-for-byte (SPEC §5): "DECISION" beside "decision", "Tool",
// "Arguments" and "ſession" (U+017F) are unknown fields, 400 naming them,
// and nothing changes; a tool name outside 1–128 bytes of letters, digits
// and "_.:/@-" is 400 about tool.
func TestExactFieldNames(t *testing.T) {
	e := start(t, acmeYAML)
	pending := e.req("acme", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	id := str(pending.body["id"])
	before := e.count()
	cases := []struct {
		name, op, token, body, field string
	}{
		{"DECISION beside decision", "answer", tokPerson, `{"id":"` + id + `","expected":0,"decision":"deny","DECISION":"allow"}`, "DECISION"},
		{"Decision alone", "answer", tokPerson, `{"id":"` + id + `","expected":0,"Decision":"allow"}`, "Decision"},
		{"ID of the answered request", "answer", tokPerson, `{"ID":"` + id + `","expected":0,"decision":"allow"}`, "ID"},
		{"Tool", "submit", tokMain, `{"Tool":"deploy","arguments":{}}`, "Tool"},
		{"Arguments", "submit", tokMain, `{"tool":"deploy","Arguments":{}}`, "Arguments"},
		{"long s in session", "submit", tokMain, `{"tool":"deploy","arguments":{},"ſession":"ses-1"}`, "ſession"},
		{"Call_Digest", "claim", tokMain, `{"id":"` + id + `","Call_Digest":"x"}`, "Call_Digest"},
		{"Slack markup as tool", "submit", tokMain, `{"tool":"<!channel> <https://evil.example|Approve here>","arguments":{}}`, "tool"},
		{"tools.call target with a space", "submit", tokMain, `{"capability":{"action":"tools.call","target":"read file"},"arguments":{}}`, "capability.target"},
	}
	for _, c := range cases {
		e.req("acme", c.op, c.token, c.body).wantProblem(t, c.name, http.StatusBadRequest, "InvalidRequest", c.field)
	}
	if after := e.count(); after != before {
		t.Errorf("refused messages changed the requests: %d, then %d", before, after)
	}
	if got := e.http.Get(tokMain, idOf(id)); got.Revision != 0 || got.Status != "pending" {
		t.Errorf("the pending request changed: %+v", got)
	}
}
