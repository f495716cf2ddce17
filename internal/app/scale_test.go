package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/deciders/review"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// Horizontal scale on one external NATS: two API and two deciders
// processes, three runtimes of agt_programmer (each on its own connection,
// as separate processes would be). Every review is taken by one runtime,
// every request is decided exactly once, and a runtime that dies after
// taking a review leaves the request to agt_programmer's review_timeout,
// which passes it up to agt_main.
func TestScaleRuntimesAndProcesses(t *testing.T) {
	url := startExternalNATS(t)
	fast := func(c *config.Config) {
		for i, a := range c.Tenants[0].Agents {
			if a.ID == "agt_programmer" {
				c.Tenants[0].Agents[i].ReviewTimeout = "3s"
			}
		}
	}
	apis := []*app.App{startRoleWith(t, url, fast, "api"), startRoleWith(t, url, fast, "api")}
	startRoleWith(t, url, fast, "deciders")
	startRoleWith(t, url, fast, "deciders")
	decided := countDecided(t, url)

	programmer := domain.Ref{Kind: domain.KindAgent, ID: "agt_programmer"}
	ctx, stop := context.WithCancel(context.Background())
	var takes [3]atomic.Int64
	var served sync.WaitGroup
	for i := range takes {
		nc := dialAs(t, url, programmer)
		served.Add(1)
		go func() {
			defer served.Done()
			_ = review.Serve(ctx, nc, "dev-programmer", func(context.Context, review.Bundle) (review.Answer, error) {
				takes[i].Add(1)
				return review.Answer{Decision: review.Deny, Reason: "Not in the brief."}, nil
			}, review.For("demo", "agt_programmer"))
		}()
	}
	const n = 30
	ids := make([]string, n)
	for i := range ids {
		var r record
		if code := newClient("http://"+apis[i%2].Addr(), "dev-sub").do(t, "POST", "/v1/requests", refund(i), nil, &r); code != 201 {
			t.Fatalf("submit %d: %d", i, code)
		}
		ids[i] = r.ID
	}
	check := newClient("http://"+apis[0].Addr(), "dev-sub")
	for _, id := range ids {
		testutil.Eventually(t, 30*time.Second, func() bool {
			var r record
			check.do(t, "GET", "/v1/requests/"+id, nil, nil, &r)
			return r.Status == "denied" && r.Decision.By.ID == "agt_programmer"
		}, "each request denied by agt_programmer's runtime")
	}
	stop()
	served.Wait()
	total, busy := int64(0), 0
	for i := range takes {
		total += takes[i].Load()
		if takes[i].Load() > 0 {
			busy++
		}
	}
	// Each offer reaches one runtime of the queue group; a repeat (a take
	// slower than 5 s) is rare, never one per runtime.
	if total < n || total > n+5 || busy < 2 {
		t.Errorf("runtimes reviewed %d times, %d of them busy; want each of %d reviews taken once, shared out", total, busy, n)
	}
	time.Sleep(500 * time.Millisecond) // late duplicates of the events, if any
	for _, id := range ids {
		if got := decided.count(id); got != 1 {
			t.Errorf("%s: %d decided events, want exactly 1", id, got)
		}
	}

	// A runtime that takes a review and dies: the request waits out the
	// review timeout, then goes up; nobody answered for agt_programmer.
	dying := dialAs(t, url, programmer)
	took := make(chan struct{}, 1)
	if _, err := dying.QueueSubscribe(events.ReviewSubject("demo", "agt_programmer"), "countersign-review", func(m *nats.Msg) {
		_ = m.Respond(nil)
		select {
		case took <- struct{}{}:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	_ = dying.Flush()
	var r record
	check.do(t, "POST", "/v1/requests", refund(n), nil, &r)
	select {
	case <-took:
	case <-time.After(15 * time.Second):
		t.Fatal("the dying runtime was never offered the review")
	}
	dying.Close()
	testutil.Eventually(t, 20*time.Second, func() bool {
		check.do(t, "GET", "/v1/requests/"+r.ID, nil, nil, &r)
		return r.Approver != nil && r.Approver.ID == "agt_main"
	}, "the review timeout passes the request up to agt_main")
	if r.Status != "pending" {
		t.Fatalf("after the dead runtime: %s, want still pending with agt_main", r.Status)
	}
}

func startRoleWith(t *testing.T, natsURL string, edit func(*config.Config), roles ...string) *app.App {
	t.Helper()
	return startRoleOn(t, natsURL, nil, edit, roles...)
}

// startRoleOn starts a process of roles on clock (nil: the system's).
func startRoleOn(t *testing.T, natsURL string, clock clock.Clock, edit func(*config.Config), roles ...string) *app.App {
	t.Helper()
	cfg := config.Demo()
	edit(cfg)
	cfg.NATSURL, cfg.Roles, cfg.Replicas = natsURL, roles, 1
	var ln net.Listener
	if roles[0] == "api" {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	} else {
		cfg.Listen = ""
	}
	a, err := launch(context.Background(), app.Options{Config: cfg, Listener: ln, Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = a.Shutdown(ctx)
	})
	return a
}

// dialAs connects to the external NATS as a runtime of p would, with p's
// inbox prefix.
func dialAs(t *testing.T, url string, p domain.Ref) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.CustomInboxPrefix(events.InboxPrefix("demo", p)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// decidedCounter counts request.decided events per request on the bus.
type decidedCounter struct {
	mu sync.Mutex
	by map[string]int
}

func countDecided(t *testing.T, url string) *decidedCounter {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := &decidedCounter{by: map[string]int{}}
	if _, err := nc.Subscribe(events.EventSubject("demo", events.TypeRequestDecided), func(m *nats.Msg) {
		c.mu.Lock()
		c.by[m.Header.Get("ce-subject")]++
		c.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	return c
}

func (c *decidedCounter) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.by[id]
}
