package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestAPITurnCancelLeavesNothingWaiting: POST /v1/turns/{turn}/cancel
// cancels every pending request the caller submitted with that turn, and
// only those (SPEC §5): not its other turns, not another agent's requests
// with the same turn, not what was already decided.
func TestAPITurnCancelLeavesNothingWaiting(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	prog, sub, main := newClient(t, url, tokProg), newClient(t, url, tokSub), newClient(t, url, tokMain)
	a := prog.pending("turn", "t-1")
	b := prog.pending("turn", "t-1", "arguments", map[string]any{"n": 2})
	other := prog.pending("turn", "t-2")
	read := prog.submit(map[string]any{"tool": "read_file", "turn": "t-1", "arguments": map[string]any{"path": "x"}})
	subs := sub.pending("turn", "t-1")

	r := main.do("POST", "/v1/turns/t-1/cancel", nil).want(t, "another agent cancels turn t-1", http.StatusOK)
	if got := r.body["cancelled"]; got == nil || len(got.([]any)) != 0 {
		t.Fatalf("another agent's cancel: %v, want []", got)
	}
	r = prog.do("POST", "/v1/turns/t-1/cancel", map[string]any{}).want(t, "cancel turn t-1", http.StatusOK)
	var got []string
	for _, id := range r.body["cancelled"].([]any) {
		got = append(got, id.(string))
	}
	if want := []string{str(a["id"]), str(b["id"])}; !slices.Equal(got, want) {
		t.Fatalf("cancelled %v, want %v (oldest first)", got, want)
	}
	for _, rec := range []map[string]any{a, b} {
		now := prog.get(str(rec["id"]))
		d := obj(now["decision"])
		if str(now["status"]) != "cancelled" || str(obj(d["by"])["id"]) != "agt_programmer" || !strings.Contains(str(d["note"]), "t-1") {
			t.Errorf("%s after the turn's cancel: %v", rec["id"], now)
		}
	}
	for _, c := range []struct {
		who  *client
		rec  map[string]any
		want string
	}{{prog, other, "pending"}, {sub, subs, "pending"}, {prog, read, "approved"}} {
		if s := str(c.who.get(str(c.rec["id"]))["status"]); s != c.want {
			t.Errorf("%s: %s, want %s", c.rec["id"], s, c.want)
		}
	}
	if r := prog.do("POST", "/v1/turns/t-1/cancel", nil).want(t, "cancel the turn again", http.StatusOK); len(r.body["cancelled"].([]any)) != 0 {
		t.Errorf("a repeated cancel cancelled %v, want []", r.body["cancelled"])
	}
	newClient(t, url, tokPerson).do("POST", "/v1/turns/t-2/cancel", nil).wantProblem(t, "a person cancels a turn", http.StatusForbidden, "Forbidden", "")
	newClient(t, url, tokNoWrite).do("POST", "/v1/turns/t-2/cancel", nil).wantProblem(t, "no requests:write", http.StatusForbidden, "Forbidden", "")
	prog.do("POST", "/v1/turns/"+strings.Repeat("x", 257)+"/cancel", nil).wantProblem(t, "a turn too long", http.StatusBadRequest, "InvalidRequest", "turn")
	prog.do("POST", "/v1/turns/t-2/cancel", map[string]any{"turn": "t-2"}).wantProblem(t, "a body with fields", http.StatusBadRequest, "InvalidRequest", "")
	if s := str(prog.get(str(other["id"]))["status"]); s != "pending" {
		t.Errorf("turn t-2 after refused cancels: %s, want pending", s)
	}
}
