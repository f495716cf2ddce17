package review_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/deciders/review"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

var quiet = review.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

// serve runs review.Serve for agt_programmer on its own connection until
// the test ends.
func serve(t *testing.T, srv *servertest.Server, fn review.Func) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	nc := connectAs(t, srv, servertest.TokenProgrammer, "agt_programmer")
	go func() {
		done <- review.Serve(ctx, nc, servertest.TokenProgrammer, fn, review.For("demo", "agt_programmer"), quiet)
	}()
	// Subscribed before the test offers anything: a first offer missed
	// would come again only after its backoff.
	testutil.Eventually(t, 10*time.Second, func() bool { return nc.NumSubscriptions() > 0 && nc.Flush() == nil }, "Serve to subscribe")
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

// bus sends op to the bus API with token and decodes the success reply
// into out; it fails the test on an error reply.
func bus(t *testing.T, nc *nats.Conn, token, op string, body any, out any) {
	t.Helper()
	data, _ := json.Marshal(body)
	msg := &nats.Msg{Subject: events.APISubject("demo", op), Data: data, Header: nats.Header{}}
	msg.Header.Set("Authorization", "Bearer "+token)
	resp, err := nc.RequestMsg(msg, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	if code := resp.Header.Get("Nats-Service-Error-Code"); code != "" {
		t.Fatalf("%s: %s %s", op, code, resp.Data)
	}
	if err := json.Unmarshal(resp.Data, out); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
}

// A subagent's request is decided by its decider's runtime over NATS
// alone: agt_sub submits on api.submit, two instances of agt_programmer's
// runtime share the offers (each request is reviewed by one of them, once)
// and answer on api.answer with agt_programmer's token; the requester sees
// the decision on api.get.
func TestServeDecidesOverTheBus(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	var mu sync.Mutex
	reviewed := map[domain.RequestID]int{}
	fn := func(_ context.Context, b review.Bundle) (review.Answer, error) {
		mu.Lock()
		reviewed[b.Request.ID]++
		mu.Unlock()
		if b.Decider.ID != "agt_programmer" || b.Request.Agent != "agt_sub" {
			return review.Answer{}, errors.New("wrong bundle")
		}
		return review.Answer{Decision: review.Deny, Reason: "Refunds wait for the audit."}, nil
	}
	serve(t, srv, fn)
	serve(t, srv, fn)
	nc := connectAs(t, srv, servertest.TokenSub, "agt_sub")
	const n = 6
	ids := make([]domain.RequestID, n)
	for i := range ids {
		var r domain.Request
		bus(t, nc, servertest.TokenSub, events.OpSubmit, map[string]any{"tool": "issue_refund",
			"arguments": map[string]any{"payment_id": i}, "timeout": "1h"}, &r)
		ids[i] = r.ID
	}
	for _, id := range ids {
		var r domain.Request
		testutil.Eventually(t, 10*time.Second, func() bool {
			bus(t, nc, servertest.TokenSub, events.OpGet, map[string]any{"id": id}, &r)
			return r.Status != domain.StatusPending
		}, "the runtime decides")
		d := r.Decision
		if r.Status != domain.StatusDenied || d.By != (domain.Ref{Kind: domain.KindAgent, ID: "agt_programmer"}) || d.Note != "Refunds wait for the audit." {
			t.Fatalf("%s: status %s decision %+v; want denied by agent agt_programmer with its reason", id, r.Status, d)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if reviewed[id] != 1 {
			t.Errorf("%s reviewed %d times, want once", id, reviewed[id])
		}
	}
}

// programmerTimeout is the demo with agt_programmer's review_timeout at 1s.
func programmerTimeout() string {
	return strings.Replace(config.DemoYAML, `        role: "Writes and runs code."`+"\n",
		`        role: "Writes and runs code."`+"\n        review_timeout: 1s\n", 1)
}

// A review nobody takes, or one taken by a runtime that never answers,
// waits no longer than the agent's review_timeout: the request goes up.
func TestReviewTimeoutPassesUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		runtime bool
	}{{"no taker", false}, {"taker never answers", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := servertest.Start(t, servertest.WithConfig(programmerTimeout()))
			var took atomic.Int32
			if tt.runtime {
				serve(t, srv, func(ctx context.Context, _ review.Bundle) (review.Answer, error) {
					took.Add(1)
					<-ctx.Done()
					return review.Answer{}, ctx.Err()
				})
			}
			api := srv.API(t)
			r := submit(t, api, servertest.TokenSub, 1)
			testutil.Eventually(t, 10*time.Second, func() bool {
				a := api.Get(servertest.TokenSub, r.ID).Approver
				return a != nil && a.ID == "agt_main"
			}, "the request goes up after agt_programmer's review_timeout")
			if tt.runtime && took.Load() != 1 {
				t.Fatalf("the runtime took %d reviews, want 1", took.Load())
			}
		})
	}
}

// A runtime whose review fails (an error or a panic) abstains at once,
// with a fixed reason: the request goes up without waiting for the review
// timeout (2m in the demo).
func TestFailedReviewAbstains(t *testing.T) {
	t.Parallel()
	for name, fn := range map[string]review.Func{
		"error": func(context.Context, review.Bundle) (review.Answer, error) {
			return review.Answer{}, errors.New("model unreachable: secret detail")
		},
		"panic": func(context.Context, review.Bundle) (review.Answer, error) { panic("boom") },
		"unknown decision": func(context.Context, review.Bundle) (review.Answer, error) {
			return review.Answer{Decision: "maybe"}, nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := servertest.Start(t)
			serve(t, srv, fn)
			api := srv.API(t)
			r := submit(t, api, servertest.TokenSub, 1)
			var got domain.Request
			testutil.Eventually(t, 10*time.Second, func() bool {
				got = api.Get(servertest.TokenSub, r.ID)
				return got.Revision > 0
			}, "the runtime abstains")
			if got.Approver.ID != "agt_main" || len(got.Abstentions) != 1 || got.Abstentions[0].Agent != "agt_programmer" ||
				got.Abstentions[0].Note != "the agent's runtime could not review this request" {
				t.Fatalf("approver %+v abstentions %+v; want agt_programmer's abstention with the fixed reason", got.Approver, got.Abstentions)
			}
		})
	}
}

// An answer of a revision that moved on is ErrConflict over the bus (and
// changes nothing): a duplicate offer's answer is harmless.
func TestBusAnswerOfAStaleRevisionConflicts(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	api := srv.API(t)
	r := submit(t, api, servertest.TokenSub, 1)
	answer := review.BusAnswer(connectAs(t, srv, servertest.TokenProgrammer, "agt_programmer"), "demo", servertest.TokenProgrammer, 5*time.Second)
	b := review.Bundle{Request: r}
	if err := answer(context.Background(), b, review.Answer{Decision: review.Abstain, Reason: "first"}); err != nil {
		t.Fatal(err)
	}
	err := answer(context.Background(), b, review.Answer{Decision: review.Deny, Reason: "again"})
	if !errors.Is(err, review.ErrConflict) {
		t.Fatalf("stale answer: %v, want ErrConflict", err)
	}
	if got := api.Get(servertest.TokenSub, r.ID); got.Status != domain.StatusPending || got.Revision != 1 {
		t.Fatalf("after the stale answer: %s at revision %d, want pending at 1", got.Status, got.Revision)
	}
	// A message whose token does not authenticate is refused with 401
	// Unauthenticated into the sender's inbox (SPEC §9: never silence),
	// and changes nothing.
	bad := review.BusAnswer(connectAs(t, srv, servertest.TokenProgrammer, "agt_programmer"), "demo", "not-a-token", 5*time.Second)
	if err := bad(context.Background(), b, review.Answer{Decision: review.Deny}); !errors.Is(err, review.ErrAnswer) || !strings.Contains(err.Error(), "401 Unauthenticated") {
		t.Fatalf("answer with a foreign token: %v, want ErrAnswer with 401 Unauthenticated", err)
	}
	if got := api.Get(servertest.TokenSub, r.ID); got.Status != domain.StatusPending || got.Revision != 1 {
		t.Fatalf("after the foreign token's answer: %s at revision %d, want pending at 1", got.Status, got.Revision)
	}
}

// An escalation's offer goes to the next decider's subject: agt_sub's
// request is offered on countersign.demo.review.agt_programmer; its runtime
// abstains; the next offer, at revision 1, is on
// countersign.demo.review.agt_main, and on no other subject.
func TestEscalatedOfferGoesToTheNextDecider(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	nc := connect(t, srv)
	var mu sync.Mutex
	var seen []string
	watch, err := nc.Subscribe("countersign.demo.review.*", func(m *nats.Msg) {
		mu.Lock()
		// Delivery is at least once (a slow take is offered again): count
		// each offer once.
		if o := m.Subject + "@" + m.Header.Get("ce-revision"); !slices.Contains(seen, o) {
			seen = append(seen, o)
		}
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Unsubscribe()
	mainOffers := listen(t, nc, "countersign.demo.review.agt_main", always)
	serve(t, srv, func(context.Context, review.Bundle) (review.Answer, error) {
		return review.Answer{Decision: review.Abstain, Reason: "Ask above."}, nil
	})
	r := submit(t, srv.API(t), servertest.TokenSub, 1)
	testutil.Eventually(t, 10*time.Second, func() bool { return mainOffers.count() > 0 }, "agt_main is offered the review")
	if got := mainOffers.get(0); got.Header.Get("ce-subject") != string(r.ID) || got.Header.Get("ce-revision") != "1" {
		t.Fatalf("agt_main's offer: about %s at revision %s", got.Header.Get("ce-subject"), got.Header.Get("ce-revision"))
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= 2
	}, "the watcher sees both offers")
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	want := []string{"countersign.demo.review.agt_programmer@0", "countersign.demo.review.agt_main@1"}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Fatalf("offers seen %v, want %v", seen, want)
	}
}

// Serve refuses a non-positive answer wait before it subscribes.
func TestServeRefusesNonPositiveAnswerWait(t *testing.T) {
	err := review.Serve(context.Background(), nil, "tok", nil, review.For("demo", "agt_main"), review.WithAnswerWait(0))
	if err == nil || !strings.Contains(err.Error(), "answer wait") {
		t.Errorf("answer wait 0: %v, want a refusal", err)
	}
}
