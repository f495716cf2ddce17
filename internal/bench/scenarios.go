package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
)

// benchTool is the capability the grant scenario is granted.
const benchTool = "bench_refund"

// grantScenario: a lifetime allow grant exists (made through the API: the
// worker asks, its parent endorses, the person allows for its lifetime);
// then every submit is decided by that grant in its 201.
func grantScenario(ctx context.Context, o Options) (Result, error) {
	cl := newHTTPClient(o.Concurrency)
	worker := &client{url: o.URL, token: o.Worker, http: cl}
	if err := makeGrant(ctx, o, cl); err != nil {
		return Result{}, fmt.Errorf("bench: setting up the grant: %w", err)
	}
	var n atomic.Int64
	return run(ctx, o.Concurrency, o.Duration, func(ctx context.Context, _ int) error {
		i := n.Add(1)
		body := mustJSON(map[string]any{"tool": benchTool, "arguments": map[string]any{"n": i, "amount": 4900, "currency": "GBP"}})
		r, err := submit(ctx, worker, body, o.Idempotency, i)
		if err == nil && (r.Status != "approved" || r.Decision == nil || r.Decision.By.Kind != "grant") {
			err = fmt.Errorf("submit %s was %s, not approved by a grant", r.ID, r.Status)
		}
		return err
	}), nil
}

func submit(ctx context.Context, c *client, body []byte, idem bool, i int64) (record, error) {
	if !idem {
		return c.call(ctx, "POST", "/v1/requests", body, http.StatusCreated)
	}
	return c.callWithKey(ctx, body, fmt.Sprintf("bench-%d-%d", i, randSuffix))
}

// makeGrant walks one request up the chain and approves it for life.
func makeGrant(ctx context.Context, o Options, cl *http.Client) error {
	worker := &client{url: o.URL, token: o.Worker, http: cl}
	r, err := worker.call(ctx, "POST", "/v1/requests", mustJSON(map[string]any{"tool": benchTool, "arguments": map[string]any{}}), http.StatusCreated)
	if err != nil || r.Status == "approved" {
		return err
	}
	endorser := &client{url: o.URL, token: o.Endorser, http: cl}
	decider := &client{url: o.URL, token: o.Decider, http: cl}
	for _, step := range []struct {
		c     *client
		scope string
	}{{endorser, "once"}, {decider, "lifetime"}} {
		r, err = step.c.call(ctx, "POST", "/v1/requests/"+r.ID, mustJSON(map[string]any{"expected": r.Revision, "decision": "allow", "scope": step.scope}), http.StatusOK)
		if err != nil {
			return err
		}
	}
	if r.Status != "approved" {
		return errors.New("the grant request was not approved")
	}
	return nil
}

// personScenario: each submit goes to the person; a concurrent decider
// answers it; the submitter's long-poll returns the decision.
func personScenario(ctx context.Context, o Options) (Result, error) {
	cl := newHTTPClient(3 * o.Concurrency)
	submitter := &client{url: o.URL, token: o.Submitter, http: cl}
	decider := &client{url: o.URL, token: o.Decider, http: cl}
	ids := make(chan string, o.Concurrency)
	dctx, stop := context.WithCancel(ctx)
	defer stop()
	for w := 0; w < o.Concurrency; w++ {
		go answerLoop(dctx, decider, ids)
	}
	var n atomic.Int64
	return run(ctx, o.Concurrency, o.Duration, func(ctx context.Context, _ int) error {
		i := n.Add(1)
		body := mustJSON(map[string]any{"tool": "bench_email", "arguments": map[string]any{"n": i}, "timeout": "5m"})
		r, err := submit(ctx, submitter, body, o.Idempotency, i)
		if err != nil {
			return err
		}
		ids <- r.ID
		return waitTerminal(ctx, submitter, r.ID)
	}), nil
}

func answerLoop(ctx context.Context, decider *client, ids <-chan string) {
	body := mustJSON(map[string]any{"expected": 0, "decision": "allow"})
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-ids:
			_, _ = decider.call(ctx, "POST", "/v1/requests/"+id, body, http.StatusOK)
		}
	}
}

func waitTerminal(ctx context.Context, c *client, id string) error {
	for ctx.Err() == nil {
		r, err := c.call(ctx, "GET", "/v1/requests/"+id+"?wait=30s", nil, http.StatusOK)
		if err != nil {
			return err
		}
		if r.Status != "pending" {
			return nil
		}
	}
	return ctx.Err()
}
