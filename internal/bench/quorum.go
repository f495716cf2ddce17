package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/countersign/countersign/config"
)

// quorumSecond is the token of the quorum scenario's second person.
const quorumSecond = "bench-person-2"

// quorumYAML is the demo tenant with a second person, u-2, and a policy
// that makes bench_quorum need both u-1 and u-2 (SPEC §12).
func quorumYAML() string {
	y := unthrottled(config.DemoYAML)
	y = strings.Replace(y, "    members:\n", `    groups:
      - {id: bench-approvers, members: [u-1, u-2]}
    approval_policies:
      - {id: bench-two, match: ["tools.call:bench_quorum"], approvers: {group: bench-approvers}, approve: 2}
    members:
      - id: u-2
        policy: {allow: ["*"]}
`, 1)
	return y + "      - {token: " + quorumSecond + `, principal: "person:u-2", scopes: [approvals:read, approvals:write]}` + "\n"
}

func withQuorumServer(ctx context.Context, o Options) (Result, error) {
	cfg, err := config.Parse([]byte(quorumYAML()))
	if err != nil {
		return Result{}, err
	}
	return withServer(ctx, o, cfg, quorumScenario)
}

// quorumScenario is personScenario with two people: each submit goes to
// a group of two and needs both; the two allow it at once (each with the
// revision the request was created at, so one of them may lose the
// compare-and-set and apply again); the submitter's long-poll returns
// the decision. Set beside person, it shows what the second approval
// costs.
func quorumScenario(ctx context.Context, o Options) (Result, error) {
	cl := newHTTPClient(4 * o.Concurrency)
	submitter := &client{url: o.URL, token: o.Submitter, http: cl}
	first := &client{url: o.URL, token: o.Decider, http: cl}
	second := &client{url: o.URL, token: o.Second, http: cl}
	ids1, ids2 := make(chan string, o.Concurrency), make(chan string, o.Concurrency)
	dctx, stop := context.WithCancel(ctx)
	defer stop()
	for w := 0; w < o.Concurrency; w++ {
		go answerLoop(dctx, first, ids1)
		go answerLoop(dctx, second, ids2)
	}
	var n atomic.Int64
	return run(ctx, o.Concurrency, o.Duration, func(ctx context.Context, _ int) error {
		i := n.Add(1)
		body := mustJSON(map[string]any{"tool": "bench_quorum", "arguments": map[string]any{"n": i}, "timeout": "5m"})
		r, err := submit(ctx, submitter, body, o.Idempotency, i)
		if err != nil {
			return err
		}
		if r.Status != "pending" {
			return fmt.Errorf("submit %s was %s, not pending on the group", r.ID, r.Status)
		}
		ids1 <- r.ID
		ids2 <- r.ID
		for r.Status == "pending" && ctx.Err() == nil {
			if r, err = submitter.call(ctx, "GET", "/v1/requests/"+r.ID+"?wait=30s", nil, http.StatusOK); err != nil {
				return err
			}
		}
		if r.Status != "approved" && ctx.Err() == nil {
			return fmt.Errorf("request %s ended %s, not approved by both", r.ID, r.Status)
		}
		return ctx.Err()
	}), nil
}
