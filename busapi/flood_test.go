package busapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/busapi"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// TestFloodFromOneToken: one token holding DefaultMaxInFlight messages
// gets 429 RateLimited with Retry-After for the next, while other tokens
// and other tenants are answered; its held messages all finish.
func TestFloodFromOneToken(t *testing.T) {
	e := start(t, acmeYAML)
	sub := e.req("acme", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	id := str(sub.body["id"])
	nc := e.client(tokMain)
	inbox := e.inbox(tokMain)
	replies, err := nc.SubscribeSync(inbox + ".*")
	if err != nil {
		t.Fatal(err)
	}
	n := busapi.DefaultMaxInFlight
	for i := 0; i < n; i++ {
		m := msg(t, events.APISubject("acme", "get"), tokMain, obj{"id": id, "wait": "50s"})
		m.Reply = inbox + "." + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	hub := e.srv.App.Service.Hub()
	testutil.Eventually(t, 10*time.Second, func() bool { return hub.Waiting() == int64(n) }, "the flood to be held")

	r := e.req("acme", "get", tokMain, obj{"id": id})
	r.wantProblem(t, "one more from the flooding token", http.StatusTooManyRequests, "RateLimited", "")
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	e.req("acme", "get", tokPerson, obj{"id": id}).want(t, "another token meanwhile", http.StatusOK)
	e.req("globex", "list", tokX, nil).want(t, "another tenant meanwhile", http.StatusOK)

	e.http.Answer(tokPerson, idOf(id), "allow", "")
	for i := 0; i < n; i++ {
		m, err := replies.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("held reply %d: %v", i, err)
		}
		if r := parse(t, m).want(t, "held get", http.StatusOK); r.body["status"] != "approved" {
			t.Fatalf("held get: %s", r.raw)
		}
	}
	e.req("acme", "get", tokMain, obj{"id": id}).want(t, "the flooding token after its flood", http.StatusOK)
}

// TestLongPollBound: the bus's long-polls count against the same
// max_long_polls as HTTP's; past it, 429 RateLimited with Retry-After.
func TestLongPollBound(t *testing.T) {
	e := start(t, "max_long_polls: 1\n"+acmeYAML)
	sub := e.req("acme", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	id := str(sub.body["id"])
	held := make(chan reply, 1)
	go func() { held <- e.req("acme", "get", tokMain, obj{"id": id, "wait": "50s"}) }()
	hub := e.srv.App.Service.Hub()
	testutil.Eventually(t, 10*time.Second, func() bool { return hub.Waiting() == 1 }, "one long-poll held")
	r := e.req("acme", "get", tokPerson, obj{"id": id, "wait": "50s"})
	r.wantProblem(t, "a second long-poll", http.StatusTooManyRequests, "RateLimited", "")
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if code, raw := e.httpDo("GET", "/v1/requests/"+id+"?wait=50s", tokPerson, nil); code != http.StatusTooManyRequests {
		t.Errorf("HTTP long-poll past the bound: %d %s", code, raw)
	}
	e.http.Answer(tokPerson, idOf(id), "deny", "")
	(<-held).want(t, "the held long-poll", http.StatusOK)
}
