package busapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// TestShutdownAnswersHeldPolls: at shutdown a held bus long-poll answers
// at once with the request as it is, and the process stops without
// waiting out the poll.
func TestShutdownAnswersHeldPolls(t *testing.T) {
	e := start(t, acmeYAML)
	sub := e.req("acme", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	nc := e.client(tokMain)
	replies, err := nc.SubscribeSync(e.inbox(tokMain))
	if err != nil {
		t.Fatal(err)
	}
	m := msg(t, events.APISubject("acme", "get"), tokMain, obj{"id": sub.body["id"], "wait": "50s"})
	m.Reply = replies.Subject
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return e.srv.App.Service.Hub().Waiting() == 1 }, "the poll to be held")
	stopped := make(chan struct{})
	go func() { e.srv.Stop(); close(stopped) }()
	got, err := replies.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("held poll at shutdown: %v", err)
	}
	if r := parse(t, got).want(t, "held poll at shutdown", http.StatusOK); r.body["status"] != "pending" {
		t.Errorf("held poll: %s", r.raw)
	}
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("shutdown waited for the poll")
	}
}
