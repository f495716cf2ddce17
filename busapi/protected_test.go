package busapi_test

import (
	"net/http"
	"testing"

	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// api.answer refuses a protected write (409, reason
// protected_write_unwatched, nothing changes) while no /v1/rpc client is
// subscribed to its session (a token's connection subscribed to the
// watch subject does not count), and takes it once one is: the rule of
// the answer use case, not of one surface.
func TestAnswerProtectedWriteOnlyWhileWatched(t *testing.T) {
	e := start(t, acmeYAML)
	sub := e.req("acme", "submit", tokMain, obj{"tool": "Write", "session": "ses-pw", "arguments": obj{"file_path": ".git/config"},
		"subject": obj{"kind": "tool", "protected_write": true}}).want(t, "submit", http.StatusCreated)
	id := str(sub.body["id"])
	// An agent token (which may reply to what it receives) cannot pose
	// as a watcher on its own connection: the watch subject is
	// countersign's alone.
	fake, err := e.client(tokMain).Subscribe(events.WatchSubject("acme", "ses-pw"), func(m *nats.Msg) { _ = m.Respond([]byte("watched")) })
	if err != nil {
		t.Fatal(err)
	}
	_ = e.client(tokMain).Flush()
	defer func() { _ = fake.Unsubscribe() }()
	for _, d := range []string{"allow", "deny"} {
		r := e.req("acme", "answer", tokPerson, obj{"id": id, "expected": 0, "decision": d})
		r.wantProblem(t, "unwatched "+d, http.StatusConflict, "RequestConflict", "")
		if r.body["reason"] != "protected_write_unwatched" {
			t.Errorf("unwatched %s: reason %v", d, r.body["reason"])
		}
	}
	if got := e.req("acme", "get", tokPerson, obj{"id": id}).want(t, "get", http.StatusOK); got.body["status"] != "pending" || got.body["revision"] != 0.0 {
		t.Fatalf("the refused answers changed the request: %s", got.raw)
	}
	e.http.DialRPC(tokPerson).Watch("ses-pw")
	ans := e.req("acme", "answer", tokPerson, obj{"id": id, "expected": 0, "decision": "allow"}).want(t, "answer while watched", http.StatusOK)
	if ans.body["status"] != "approved" {
		t.Fatalf("answer while watched: %s", ans.raw)
	}
}
