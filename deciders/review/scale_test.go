package review_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders/review"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// pairsConfig is a tenant with n agent deciders under agt_main, each with
// one subagent of its own; agent i's token is "tok-d<i>", its subagent's
// "tok-s<i>". (Configured rather than registered: registering thousands
// costs one fsync'd write each, and the offers treat both alike.)
func pairsConfig(n int) string {
	var agents, tokens strings.Builder
	for i := range n {
		fmt.Fprintf(&agents, "      - {id: agt_d%d, member: u-1, parent: agt_main}\n", i)
		fmt.Fprintf(&agents, "      - {id: agt_s%d, member: u-1, parent: agt_d%d, brief: \"task %d\"}\n", i, i, i)
		fmt.Fprintf(&tokens, "      - {token: tok-d%d, principal: \"agent:agt_d%d\", scopes: [approvals:write]}\n", i, i)
		fmt.Fprintf(&tokens, "      - {token: tok-s%d, principal: \"agent:agt_s%d\", scopes: [requests:write, approvals:read]}\n", i, i)
	}
	return `tenants:
  - id: demo
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents:
      - {id: agt_main, member: u-1}
` + agents.String() + `    tokens:
      - {token: dev-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
` + tokens.String()
}

// Tens of thousands of agents cost subscriptions, not consumers: with
// 2,000 agents, a runtime for each of 1,000 agent deciders
// (one subscription each) and reviews offered to 100 of them, the work
// stream still has its one shared consumer and the account only
// countersign's own handful.
func TestAgentsCostSubscriptionsNotConsumers(t *testing.T) {
	t.Parallel()
	const pairs, requests = 1000, 100
	srv := servertest.Start(t, servertest.WithConfig(pairsConfig(pairs)))
	js := srv.App.Broker.JS
	ctx := context.Background()
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for i := range pairs {
		// Each runtime connects as its agent, as a runtime does: the bus
		// answers only into the caller's own inbox.
		nc := connectAs(t, srv, fmt.Sprintf("tok-d%d", i), domain.AgentID(fmt.Sprintf("agt_d%d", i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn := func(_ context.Context, b review.Bundle) (review.Answer, error) {
				return review.Answer{Decision: review.Deny, Reason: "seen by " + string(b.Decider.ID) + " for " + b.Decider.Brief}, nil
			}
			_ = review.Serve(sctx, nc, fmt.Sprintf("tok-d%d", i), fn, review.For("demo", domain.AgentID(fmt.Sprintf("agt_d%d", i))), quiet)
		}()
	}
	api := srv.API(t)
	ids := make([]domain.RequestID, requests)
	for i := range ids {
		ids[i] = submit(t, api, fmt.Sprintf("tok-s%d", i*(pairs/requests)), i).ID
	}
	for i, id := range ids {
		k := i * (pairs / requests)
		var r domain.Request
		testutil.Eventually(t, 20*time.Second, func() bool {
			r = api.Get("dev-person", id)
			return r.Status != domain.StatusPending
		}, "each agent decider's runtime decides")
		if want := fmt.Sprintf("seen by agt_d%d for task %d", k, k); r.Decision.By.ID != fmt.Sprintf("agt_d%d", k) || r.Decision.Note != want {
			t.Fatalf("%s decided by %+v with %q, want agt_d%d with %q", id, r.Decision.By, r.Decision.Note, k, want)
		}
	}
	work, err := js.Stream(ctx, events.WorkStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := work.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, err := js.AccountInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// countersign's own durable consumers, its mirrors' watchers and the
	// audit writer's six readers (17 in all today, some made after the
	// start): a handful, whatever the number of agents.
	if info.State.Consumers != 1 || after.Consumers > 24 {
		t.Fatalf("work stream consumers %d (want 1); account consumers %d (want a handful for %d agents)",
			info.State.Consumers, after.Consumers, 2*pairs)
	}
}
