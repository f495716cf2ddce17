package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// A protected write answered over HTTP is refused (409, reason
// protected_write_unwatched, nothing changes) while no /v1/rpc client is
// subscribed to its session — whatever the decision, and whoever else
// watches other sessions or the inbox — and taken once one is.
func TestAnswerProtectedWriteOnlyWhileWatched(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	rpc := servertest.API{T: t, URL: url}
	person := newClient(t, url, tokPerson)
	rec := newClient(t, url, tokMain).do("POST", "/v1/requests", map[string]any{"tool": "Write", "session": "ses-pw",
		"arguments": map[string]any{"file_path": ".git/config"}, "subject": map[string]any{"kind": "tool", "protected_write": true}}).
		want(t, "submit", http.StatusCreated).body
	path := "/v1/requests/" + str(rec["id"])
	unwatched := func(what string) {
		t.Helper()
		for _, d := range []string{"allow", "deny"} {
			r := person.do("POST", path, map[string]any{"expected": 0, "decision": d})
			r.wantProblem(t, what+", "+d, http.StatusConflict, "RequestConflict", "")
			if r.body["reason"] != "protected_write_unwatched" {
				t.Errorf("%s, %s: reason %v, want protected_write_unwatched", what, d, r.body["reason"])
			}
		}
		if got := person.do("GET", path, nil).want(t, "get", http.StatusOK).body; got["status"] != "pending" || num(got["revision"]) != 0 {
			t.Fatalf("%s: the refused answers changed the request: %v %v", what, got["status"], got["revision"])
		}
	}
	unwatched("nobody subscribed")
	rpc.DialRPC(tokPerson).Call("approval/subscribe", map[string]any{"inbox": true})
	watch(t, url, tokPerson, "ses-other")
	unwatched("the inbox and another session watched")
	watch(t, url, tokPerson, "ses-pw")
	got := person.do("POST", path, map[string]any{"expected": 0, "decision": "allow"}).want(t, "answer while watched", http.StatusOK).body
	if got["status"] != "approved" {
		t.Fatalf("answer while watched: %v", got["status"])
	}
}

// watch subscribes a real /v1/rpc client of token to session, until the
// test ends.
func watch(t *testing.T, url, token, session string) {
	t.Helper()
	servertest.API{T: t, URL: url}.DialRPC(token).Watch(session)
}

// A grant never decides a protected write at submit (no one would be
// watching): after an "always allow" of the same call, the protected
// write still waits for an answer.
func TestSubmitProtectedWriteSkipsGrants(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	call := map[string]any{"tool": "Write", "arguments": map[string]any{"file_path": ".git/config"}, "session": "s1"}
	person.answer(main.submit(call), "allow", "lifetime").want(t, "always allow", http.StatusOK)
	if again := main.submit(call); again["status"] != "approved" {
		t.Fatalf("the grant did not cover the same call: %v", again["status"])
	}
	call["subject"] = map[string]any{"kind": "tool", "protected_write": true}
	if rec := main.submit(call); rec["status"] != "pending" {
		t.Fatalf("a protected write was %v at submit (by %v), want pending", rec["status"], rec["decision"])
	}
}
