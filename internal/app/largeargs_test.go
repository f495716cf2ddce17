package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
)

// withArguments is what each surface answers of a request, as far as this
// test looks.
type withArguments struct {
	ID        string          `json:"id"`
	Status    string          `json:"status"`
	Revision  uint64          `json:"revision"`
	Arguments json.RawMessage `json:"arguments"`
}

// A pending request's large arguments stay in KV, not in the request
// mirror (SPEC §5 "Quotas"); every surface that shows the request reads
// them back whole: HTTP get, long-poll and list, the bus get (with and
// without a wait), the live approvers' pending snapshot (/v1/rpc), and an
// answer, whose change is written from a record read whole.
func TestLargeArgumentsReadWholeEverywhere(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(quotaTenant(10, 10, 10)))
	agent, person := newClient(srv.URL, "main-1"), newClient(srv.URL, "person")
	args, _ := json.Marshal(map[string]string{"blob": strings.Repeat("y", 3*kvstate.LargeArguments)})
	var sub withArguments
	body := map[string]any{"tool": "issue_refund", "arguments": json.RawMessage(args), "timeout": "1h"}
	if code := agent.do(t, "POST", "/v1/requests", body, nil, &sub); code != http.StatusCreated || sub.Status != "pending" {
		t.Fatalf("submit: %d, %s", code, sub.Status)
	}
	held, ok := srv.App.Service.Views().Requests().Get(kvstate.RequestKey("demo", domain.RequestID(sub.ID)))
	if !ok || !held.Partial() || held.Arguments != nil {
		t.Fatalf("the mirror holds it (%v) partial %v with %d bytes of arguments; want partial, none", ok, held.Partial(), len(held.Arguments))
	}
	check := func(surface string, got withArguments) {
		t.Helper()
		if got.ID != sub.ID || !bytes.Equal(got.Arguments, args) {
			t.Errorf("%s: request %q with %d bytes of arguments %.30q; want %s with the %d submitted", surface, got.ID, len(got.Arguments), got.Arguments, sub.ID, len(args))
		}
	}
	for _, path := range []string{"/v1/requests/" + sub.ID, "/v1/requests/" + sub.ID + "?wait=1ms"} {
		var got withArguments
		agent.do(t, "GET", path, nil, nil, &got)
		check("GET "+path, got)
	}
	var page struct{ Items []withArguments }
	person.do(t, "GET", "/v1/requests?status=pending", nil, nil, &page)
	if len(page.Items) != 1 {
		t.Fatalf("the person's pending list has %d items, want 1", len(page.Items))
	}
	check("GET /v1/requests", page.Items[0])

	bus := mustDial(t, srv, "person", "demo", domain.Ref{Kind: domain.KindPerson, ID: "u-1"})
	for _, wait := range []string{"", "1ms"} {
		msg := nats.NewMsg(events.APISubject("demo", events.OpGet))
		msg.Header.Set("Authorization", "Bearer person")
		msg.Data, _ = json.Marshal(map[string]string{"id": sub.ID, "wait": wait})
		reply, err := bus.nc.RequestMsg(msg, 10*time.Second)
		if err != nil {
			t.Fatalf("bus get: %v", err)
		}
		var got withArguments
		_ = json.Unmarshal(reply.Data, &got)
		check("bus get, wait "+wait, got)
	}

	caller, err := srv.App.Service.Authenticate("Bearer person", nil)
	if err != nil {
		t.Fatal(err)
	}
	live, err := srv.App.Service.PendingIn(context.Background(), caller, nil)
	if err != nil || len(live) != 1 {
		t.Fatalf("live snapshot: %d records, %v", len(live), err)
	}
	check("live snapshot", withArguments{ID: string(live[0].ID), Arguments: live[0].Arguments})

	var answered withArguments
	answer := map[string]any{"expected": sub.Revision, "decision": "allow"}
	if code := person.do(t, "POST", "/v1/requests/"+sub.ID, answer, nil, &answered); code != http.StatusOK || answered.Status != "approved" {
		t.Fatalf("answer: %d, %s", code, answered.Status)
	}
	check("the answer", answered)
	var after withArguments
	agent.do(t, "GET", "/v1/requests/"+sub.ID, nil, nil, &after)
	check("GET after the answer", after)
}
