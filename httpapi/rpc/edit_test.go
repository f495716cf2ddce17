package rpc_test

import (
	"encoding/json"
	"testing"
)

// TestDecideWithEdits: approval/decide takes a person's edits as POST
// /v1/requests/{id} does (SPEC §5): with allow_once the call is bound to
// the edited arguments; with another choice, or from an agent, it is an
// InvalidRequest and changes nothing.
func TestDecideWithEdits(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"inbox": true})
	rec := submit(t, s, tokMain, map[string]any{"tool": "deploy", "arguments": map[string]any{"amount": 4900}})
	id := rec["id"].(string)
	n := w.expect("approval/requested", id)
	edited := map[string]any{"amount": 1000}

	wantError(t, "allow_always with edits", w.decide(n, "allow_always", "arguments", edited), -32602, "InvalidRequest", "scope")
	wantError(t, "arguments not an object", w.decide(n, "allow_once", "arguments", []int{1}), -32602, "InvalidRequest", "arguments")
	if got := record(t, s, tokPerson, id); got["revision"] != 0.0 || got["edited"] != nil {
		t.Fatalf("refused edits changed the request: %v", got)
	}
	if d := w.decide(n, "allow_once", "arguments", edited); d.Error != nil || d.Result["status"] != "approved" {
		t.Fatalf("allow_once with edits: %s", d.raw)
	}
	got := record(t, s, tokPerson, id)
	args, _ := json.Marshal(got["arguments"])
	if e, _ := got["edited"].(map[string]any); string(args) != `{"amount":1000}` || e["original_digest"] != rec["call_digest"] {
		t.Errorf("record after the edit: arguments %s edited %v", args, got["edited"])
	}
}
