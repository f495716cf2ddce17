package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/notify"
)

// receiver is a webhook endpoint that refuses the first attempts of one
// request's events and records, in order, what it took.
type receiver struct {
	mu      sync.Mutex
	refuse  map[string]int // request id -> attempts still refused
	took    []string       // "<request id>@<revision>"
	refused int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var ce struct {
		Subject  string          `json:"subject"`
		Revision json.RawMessage `json:"revision"`
	}
	if json.Unmarshal(b, &ce) != nil || r.Header.Get(notify.HeaderSignature) == "" {
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.refuse[ce.Subject] > 0 {
		rc.refuse[ce.Subject]--
		rc.refused++
		http.Error(w, "not now", http.StatusServiceUnavailable)
		return
	}
	var rev string
	_ = json.Unmarshal(ce.Revision, &rev)
	if rev == "" {
		rev = string(ce.Revision)
	}
	rc.took = append(rc.took, ce.Subject+"@"+rev)
}

func (rc *receiver) Took() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.took...)
}

// One request's events reach an endpoint in revision order, an event
// refused being tried again before the next of its request; another
// request's events are not held up behind it.
func TestFeedKeepsOrderPerRequestOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	js := testutil.NewJetStream(t).JS
	store, err := kvstate.Open(ctx, kvstate.Config{JS: js, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	slow, fast := domain.NewRequestID(), domain.NewRequestID()
	rc := &receiver{refuse: map[string]int{string(slow): 3}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	w, err := notify.New(notify.Config{JS: js, Endpoints: []notify.Endpoint{{Tenant: "acme", URL: srv.URL + "/hook", Key: []byte("k")}},
		Tuning: notify.Tuning{Timeout: 5 * time.Second, BackoffBase: 50 * time.Millisecond, BackoffMax: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	pending := func(id domain.RequestID) {
		r := &domain.Request{ID: id, Tenant: "acme", Agent: "agt_a", Status: domain.StatusPending,
			Capability: domain.Capability{Action: "tools.call", Target: "deploy"}, Subject: domain.Subject{Kind: "tool"},
			Approver: &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, CreatedAt: time.Now(), DeadlineAt: time.Now().Add(time.Hour)}
		if _, err := store.CreateRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	pending(slow)
	pending(fast)
	for _, id := range []domain.RequestID{slow, fast, slow} {
		if _, err := store.Transition(ctx, "acme", id, func(r *domain.Request) (string, error) {
			r.Reason = "updated"
			return events.TypeRequestUpdated, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return len(rc.Took()) == 5 }, "five events delivered")
	got := rc.Took()
	var order []string
	fastAt := -1
	for i, s := range got {
		if s[:len(slow)] == string(slow) {
			order = append(order, s[len(slow):])
		} else if fastAt < 0 {
			fastAt = i
		}
	}
	if fmt.Sprint(order) != "[@0 @1 @2]" {
		t.Errorf("the refused request's events arrived as %v, want revisions 0, 1, 2 in order (all: %v)", order, got)
	}
	if fastAt != 0 {
		t.Errorf("the other request's first event arrived at %d of %v, want first (not held behind the refused one)", fastAt, got)
	}
	if rc.refused != 3 {
		t.Errorf("%d attempts refused, want 3", rc.refused)
	}
}
