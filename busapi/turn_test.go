package busapi_test

import (
	"net/http"
	"testing"
)

// TestCancelTurn: api.cancel with {"turn"} is POST /v1/turns/{turn}/cancel
// on the bus: the caller's pending requests of that turn end, nobody
// else's; id and turn together, or neither, are 400.
func TestCancelTurn(t *testing.T) {
	e := start(t, acmeYAML)
	mine := e.req("acme", "submit", tokProg, obj{"tool": "deploy", "turn": "t-9", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	theirs := e.req("acme", "submit", tokMain, obj{"tool": "deploy", "turn": "t-9", "arguments": obj{}}).want(t, "submit", http.StatusCreated)

	r := e.req("acme", "cancel", tokProg, obj{"turn": "t-9"}).want(t, "cancel the turn", http.StatusOK)
	got, _ := r.body["cancelled"].([]any)
	if len(got) != 1 || got[0] != mine.body["id"] {
		t.Fatalf("cancelled %s, want [%s]", r.raw, mine.body["id"])
	}
	code, raw := e.httpDo("POST", "/v1/turns/t-9/cancel", tokProg, nil)
	if code != http.StatusOK || string(raw) != `{"cancelled":[]}`+"\n" && string(raw) != `{"cancelled":[]}` {
		t.Errorf("HTTP twin after the bus cancel: %d %s, want 200 {\"cancelled\":[]}", code, raw)
	}
	if s := e.req("acme", "get", tokMain, obj{"id": theirs.body["id"]}).body["status"]; s != "pending" {
		t.Errorf("another agent's request of the same turn: %v, want pending", s)
	}
	e.req("acme", "cancel", tokProg, obj{"turn": "t-9", "id": mine.body["id"]}).wantProblem(t, "id and turn", http.StatusBadRequest, "InvalidRequest", "turn")
	e.req("acme", "cancel", tokProg, obj{}).wantProblem(t, "neither", http.StatusBadRequest, "InvalidRequest", "id")
	e.req("acme", "cancel", tokPerson, obj{"turn": "t-9"}).wantProblem(t, "a person", http.StatusForbidden, "Forbidden", "")
}
