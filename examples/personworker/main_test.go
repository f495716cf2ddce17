package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders/review"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

const tenants = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}]
    tokens: [{token: acme-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]},
             {token: acme-a, principal: "agent:agt_a", scopes: [requests:write]}]
`

// syncBuffer is the worker's output, read while it writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func dial(t *testing.T, srv *servertest.Server, token string, p domain.Ref) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(srv.App.Broker.ClientURL(), nats.Token(token), nats.MaxReconnects(0),
		nats.CustomInboxPrefix(events.InboxPrefix("acme", p)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// The worker, as main runs it, hears a request an agent submitted over the
// bus, asks (here: a function that allows), answers as its person over the
// bus, and hears the request withdrawn once approved: NATS only.
func TestWorkerAnswersOnTheBus(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(tenants))
	me := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	nc := dial(t, srv, "acme-person", me)
	var out syncBuffer
	var asked []domain.RequestID
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	defer stop()
	go func() {
		done <- run(ctx, nc, "acme-person", "acme", "u-1", func(r *domain.Request) string {
			asked = append(asked, r.ID)
			return review.Allow
		}, &out)
	}()
	subject := events.PeopleSubject("acme", "u-1")
	acc := srv.App.Broker.Server.GlobalAccount()
	testutil.Eventually(t, 10*time.Second, func() bool { return acc.SubscriptionInterest(subject) }, "the worker subscribed")

	agent := dial(t, srv, "acme-a", domain.Ref{Kind: domain.KindAgent, ID: "agt_a"})
	m := nats.NewMsg(events.APISubject("acme", events.OpSubmit))
	m.Header.Set("Authorization", "Bearer acme-a")
	m.Data = []byte(`{"tool": "issue_refund", "arguments": {"amount": 4900}, "reason": "customer asked"}`)
	resp, err := agent.RequestMsg(m, 10*time.Second)
	if err != nil || resp.Header.Get("Status") != "201" {
		t.Fatalf("submit: %v %v %s", err, resp.Header, resp.Data)
	}
	var rec domain.Request
	if err := json.Unmarshal(resp.Data, &rec); err != nil || rec.Status != domain.StatusPending {
		t.Fatalf("submitted %s: %v", resp.Data, err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(out.String(), string(rec.ID)+" no longer waits on you: approved")
	}, "the worker answered and heard the request withdrawn")
	if err := stop(); err != nil {
		t.Fatalf("worker: %v", err)
	}
	if len(asked) != 1 || asked[0] != rec.ID {
		t.Errorf("asked about %v, want %s once", asked, rec.ID)
	}
	if got := srv.API(t).Get("acme-person", rec.ID); got.Decision == nil || got.Decision.By != me {
		t.Errorf("decision %+v, want by %v", got.Decision, me)
	}
	t.Logf("worker output:\n%s", out.String())
}
