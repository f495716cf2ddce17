package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go/jetstream"
)

// Fifty concurrent answers on one request: one state change, one decided
// event. Same-decision repeats are safe (200); the opposite is 409.
func TestConcurrentAnswersOneChange(t *testing.T) {
	srv := servertest.Start(t)
	main, person := newClient(srv.URL, "dev-main"), newClient(srv.URL, "dev-person")
	var r record
	if code := main.do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 || r.Approver.Kind != "person" {
		t.Fatalf("submit: %d %+v", code, r)
	}
	var mu sync.Mutex
	codes := map[string]map[int]int{"allow": {}, "deny": {}}
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		d := []string{"allow", "deny"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := person.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": d}, nil, nil)
			mu.Lock()
			codes[d][code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	var final record
	person.do(t, "GET", "/v1/requests/"+r.ID, nil, nil, &final)
	won, lost := "allow", "deny"
	if final.Status == "denied" {
		won, lost = "deny", "allow"
	}
	if final.Revision != 1 || codes[won][200] != 25 || codes[lost][409] != 25 {
		t.Fatalf("revision %d, codes %v; want revision 1, all %s 200 and all %s 409", final.Revision, codes, won, lost)
	}
	if n := countEvents(t, srv, r.ID, events.TypeRequestDecided); n != 1 {
		t.Fatalf("%d decided events, want 1", n)
	}
}

// countEvents counts the events of one type for one request on the events
// stream, once the outbox has caught up.
func countEvents(t *testing.T, srv *servertest.Server, id, typ string) int {
	t.Helper()
	ctx := context.Background()
	js := srv.App.Broker.JS
	subject := events.EventSubject("demo", typ)
	count := func() int {
		cons, err := js.OrderedConsumer(ctx, events.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		batch, err := cons.FetchNoWait(10000)
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			if m.Headers().Get("ce-subject") == id {
				n++
			}
		}
		return n
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return count() > 0 }, "event published")
	// A duplicate would be published before the outbox derives a later
	// write: wait for a marker request's event instead of sleeping.
	var marker record
	newClient(srv.URL, "dev-main").do(t, "POST", "/v1/requests", refund(999), nil, &marker)
	testutil.Eventually(t, 10*time.Second, func() bool {
		return hasEventFor(t, js, marker.ID)
	}, "the marker's event published")
	return count()
}

// hasEventFor reports whether any event about request id is on the events
// stream.
func hasEventFor(t *testing.T, js jetstream.JetStream, id string) bool {
	return len(about(streamMsgs(t, js, events.EventsStream, events.EventsFilter), id)) > 0
}
