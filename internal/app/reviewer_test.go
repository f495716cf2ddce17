package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// The built-in model reviewer is a runtime on the bus: while the model
// thinks, no JetStream message is held (the work consumer has nothing
// pending or unacknowledged), and its verdict still arrives.
func TestModelReviewerHoldsNoMessageWhileTheModelThinks(t *testing.T) {
	model := newScripted(t)
	model.answer(200, map[string]any{"verdict": "deny", "quote": refundRule, "evidence": []string{"GBP"}, "rationale": "No."})
	model.mu.Lock()
	model.delay = 2 * time.Second
	model.mu.Unlock()
	cfg := strings.Replace(judgeConfig(model.URL, "model"), "timeout: 2s", "timeout: 30s", 1)
	srv := servertest.Start(t, servertest.WithConfig(cfg))
	prog, person := newClient(srv.URL, "dev-programmer"), newClient(srv.URL, "dev-person")
	var r record
	prog.do(t, "POST", "/v1/requests", map[string]any{"tool": "issue_refund", "arguments": map[string]any{"currency": "GBP"}}, nil, &r)
	testutil.Eventually(t, 10*time.Second, func() bool {
		model.mu.Lock()
		defer model.mu.Unlock()
		return model.calls > 0
	}, "the model is asked")
	ctx := context.Background()
	cons, err := srv.App.Broker.JS.Consumer(ctx, events.WorkStream, events.DeciderConsumer)
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 0 || info.NumPending != 0 {
		t.Fatalf("while the model thinks: %d unacknowledged, %d pending work messages; want none", info.NumAckPending, info.NumPending)
	}
	var got record
	testutil.Eventually(t, 10*time.Second, func() bool {
		person.do(t, "GET", "/v1/requests/"+r.ID, nil, nil, &got)
		return got.Status == "denied"
	}, "the model reviewer's deny decides")
	if got.Decision.By.ID != "agt_main" {
		t.Fatalf("decided by %+v, want agt_main", got.Decision.By)
	}
}

// The model reviewer reviews what countersign stored, never what an offer
// claims: an offer about a request it does not know at that revision,
// waiting on that agent, is left untaken and the model is not asked.
func TestModelReviewerLeavesForgedOffers(t *testing.T) {
	model := newScripted(t)
	srv := servertest.Start(t, servertest.WithConfig(judgeConfig(model.URL, "model")))
	js, err := srv.App.Broker.Connect("forger") // countersign's own user: a tenant cannot publish offers at all
	if err != nil {
		t.Fatal(err)
	}
	nc := js.Conn()
	awaitInterest(t, srv, events.ReviewSubject("demo", "agt_main")) // else: no responders, not "left untaken"
	b := domain.ReviewBundle{Request: domain.Request{ID: "req_forged", Tenant: "demo", Status: domain.StatusPending,
		Approver: &domain.Ref{Kind: domain.KindAgent, ID: "agt_main"}}, Decider: domain.ReviewDecider{ID: "agt_main"}}
	data, _ := json.Marshal(b)
	msg := &nats.Msg{Subject: events.ReviewSubject("demo", "agt_main"), Data: data, Header: nats.Header{}}
	if err := events.EncodeHeaders(events.NewEvent(events.TypeReviewRequested, "demo", "req_forged", 0, time.Now(), ""), msg.Header); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.RequestMsg(msg, time.Second); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("forged offer: %v, want no taker (timeout)", err)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if model.calls != 0 {
		t.Fatalf("the model was asked %d times about a forged request", model.calls)
	}
}
