package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/countersign/countersign/deciders/review"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// busClient speaks the bus API (SPEC §9) with one token, on a connection
// of its own that may subscribe only below its principal's inbox prefix.
type busClient struct {
	nc     *nats.Conn
	tenant domain.TenantID
	token  string
}

// dialBus connects as principal p with its token.
func dialBus(url string, tenant domain.TenantID, p domain.Ref, token string) (*nats.Conn, error) {
	nc, err := nats.Connect(url, nats.Token(token), nats.Name("countersign-bench"),
		nats.CustomInboxPrefix(events.InboxPrefix(tenant, p)))
	if err != nil {
		return nil, fmt.Errorf("bench: connect to the bus as %s: %w", p, err)
	}
	return nc, nil
}

// call sends one request to countersign.<tenant>.api.<op> and decodes the
// record of a success reply; an error reply is an error.
func (b *busClient) call(ctx context.Context, op string, body []byte) (record, error) {
	msg := nats.NewMsg(events.APISubject(b.tenant, op))
	msg.Header.Set("Authorization", "Bearer "+b.token)
	msg.Data = body
	resp, err := b.nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		return record{}, err
	}
	if code := resp.Header.Get("Nats-Service-Error-Code"); code != "" {
		return record{}, fmt.Errorf("%s: %s %s: %s", op, code, resp.Header.Get("Nats-Service-Error"), resp.Data)
	}
	var r record
	return r, json.Unmarshal(resp.Data, &r)
}

// waitTerminal long-polls api.get until the request is decided.
func (b *busClient) waitTerminal(ctx context.Context, id string) (record, error) {
	body := mustJSON(map[string]any{"id": id, "wait": "30s"})
	for ctx.Err() == nil {
		r, err := b.call(ctx, "get", body)
		if err != nil || r.Status != "pending" {
			return r, err
		}
	}
	return record{}, ctx.Err()
}

// grantBusScenario is the grant scenario with every submit on the bus
// (api.submit) instead of HTTP: the same grant decides each in its reply.
func grantBusScenario(ctx context.Context, o Options) (Result, error) {
	if err := makeGrant(ctx, o, newHTTPClient(4)); err != nil {
		return Result{}, fmt.Errorf("bench: setting up the grant: %w", err)
	}
	nc, err := dialBus(o.NATSURL, o.Tenant, domain.Ref{Kind: domain.KindAgent, ID: o.WorkerAgent}, o.Worker)
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	worker := &busClient{nc: nc, tenant: o.Tenant, token: o.Worker}
	var n atomic.Int64
	return run(ctx, o.Concurrency, o.Duration, func(ctx context.Context, _ int) error {
		i := n.Add(1)
		body := mustJSON(map[string]any{"tool": benchTool, "arguments": map[string]any{"n": i, "amount": 4900, "currency": "GBP"}})
		r, err := worker.call(ctx, "submit", body)
		if err == nil && (r.Status != "approved" || r.Decision == nil || r.Decision.By.Kind != "grant") {
			err = fmt.Errorf("submit %s was %s, not approved by a grant", r.ID, r.Status)
		}
		return err
	}), nil
}

// agentScenario: every request waits on an agent decider (the worker's
// parent, o.ReviewerAgent); o.Workers runtimes of that agent, each on its
// own bus connection with the agent's token (deciders/review.Serve), take
// the offers and deny; the worker submits and long-polls over the bus. A
// request's latency is submit to decision.
func agentScenario(ctx context.Context, o Options) (Result, error) {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, o.Workers)
	for range o.Workers {
		nc, err := dialBus(o.NATSURL, o.Tenant, domain.Ref{Kind: domain.KindAgent, ID: o.ReviewerAgent}, o.Endorser)
		if err != nil {
			return Result{}, err
		}
		defer nc.Close()
		go func() {
			done <- review.Serve(rctx, nc, o.Endorser, denyAll, review.For(o.Tenant, domain.AgentID(o.ReviewerAgent)),
				review.WithConcurrency(o.Concurrency), review.WithLogger(quiet)) // answers cut off by the end of the run are expected
		}()
	}
	nc, err := dialBus(o.NATSURL, o.Tenant, domain.Ref{Kind: domain.KindAgent, ID: o.WorkerAgent}, o.Worker)
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	worker := &busClient{nc: nc, tenant: o.Tenant, token: o.Worker}
	var n atomic.Int64
	res := run(ctx, o.Concurrency, o.Duration, func(ctx context.Context, _ int) error {
		body := mustJSON(map[string]any{"tool": "bench_review", "arguments": map[string]any{"n": n.Add(1)}, "timeout": "5m"})
		r, err := worker.call(ctx, "submit", body)
		if err == nil {
			r, err = worker.waitTerminal(ctx, r.ID)
		}
		if err == nil && (r.Status != "denied" || r.Decision == nil || r.Decision.By.Kind != "agent") {
			err = fmt.Errorf("request %s was %s, not decided by the agent", r.ID, r.Status)
		}
		return err
	})
	stop()
	for range o.Workers {
		if err := <-done; err != nil && res.FirstError == "" {
			res.FirstError = "runtime: " + err.Error()
		}
	}
	return res, nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func denyAll(context.Context, review.Bundle) (review.Answer, error) {
	return review.Answer{Decision: review.Deny, Reason: "bench: the agent's runtime says no"}, nil
}
