package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/countersign/countersign/events"

	"github.com/countersign/countersign/problem"
)

// cliPending lists GET /v1/requests?status=pending, every page.
func cliPending(ctx context.Context, c *cliClient, o *cliOpts, env cliEnv) int {
	items, err := c.list(ctx, "/v1/requests", url.Values{"status": {string(events.StatusPending)}})
	if err != nil {
		return cliFail(env, "pending", err)
	}
	if o.json {
		return cliPrintItems(env, "pending", items)
	}
	recs, err := cliDecodeAll[events.Request](items)
	if err != nil {
		return cliFail(env, "pending", err)
	}
	cliRequestTable(env.stdout, recs, time.Now())
	return cliExitOK
}

// cliPrintItems prints the items of every page as one {"items": [...]}.
func cliPrintItems(env cliEnv, name string, items []json.RawMessage) int {
	if items == nil {
		items = []json.RawMessage{}
	}
	if err := cliWriteJSON(env.stdout, cliPage{Items: items}); err != nil {
		return cliFail(env, name, err)
	}
	return cliExitOK
}

func cliDecodeAll[T any](items []json.RawMessage) ([]T, error) {
	out := make([]T, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &out[i]); err != nil {
			return nil, fmt.Errorf("the server sent an item countersign cannot read: %w", err)
		}
	}
	return out, nil
}

func cliRequestTable(w io.Writer, recs []events.Request, now time.Time) {
	if len(recs) == 0 {
		fmt.Fprintln(w, "No requests are waiting for you.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tCAPABILITY\tREASON\tAPPROVER\tDEADLINE")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s (%s)\n", cliCell(string(r.ID)), cliCell(string(r.Agent)),
			cliCapability(r.Capability), cliQuote(r.Reason, 60), cliRef(r.Approver),
			cliTime(r.DeadlineAt), cliUntil(r.DeadlineAt, now))
	}
	tw.Flush()
}

// cliShow prints one request.
func cliShow(ctx context.Context, c *cliClient, o *cliOpts, env cliEnv) int {
	var rec events.Request
	raw, err := c.get(ctx, cliPath("/v1/requests/", o.args[0]), &rec)
	if err != nil {
		return cliFail(env, "show", err)
	}
	if o.json {
		cliWriteRaw(env.stdout, raw)
		return cliExitOK
	}
	cliWriteRecord(env.stdout, &rec, time.Now())
	return cliExitOK
}

// cliAnswerBody is the body of POST /v1/requests/{id} (SPEC §5).
type cliAnswerBody struct {
	Expected uint64 `json:"expected"`
	Decision string `json:"decision"`
	Scope    string `json:"scope,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Rule     string `json:"rule,omitempty"`
}

// cliAnswer returns the approve (decision "allow") or deny command: it reads
// the request's current revision and answers with it as expected, so an
// answer never lands on a request that changed since.
func cliAnswer(decision string) func(context.Context, *cliClient, *cliOpts, cliEnv) int {
	name := map[string]string{"allow": "approve", "deny": "deny"}[decision]
	return func(ctx context.Context, c *cliClient, o *cliOpts, env cliEnv) int {
		path := cliPath("/v1/requests/", o.args[0])
		var before events.Request
		if _, err := c.get(ctx, path, &before); err != nil {
			return cliFail(env, name, err)
		}
		body := cliAnswerBody{Expected: before.Revision, Decision: decision, Scope: o.scope, Reason: o.reason, Rule: o.rule}
		raw, err := c.do(ctx, http.MethodPost, path, body)
		if err != nil {
			return cliAnswerFailed(ctx, c, env, name, path, &before, err)
		}
		return cliAnswered(env, name, raw, o.json)
	}
}

func cliAnswered(env cliEnv, name string, raw []byte, asJSON bool) int {
	if asJSON {
		cliWriteRaw(env.stdout, raw)
		return cliExitOK
	}
	var rec events.Request
	if err := json.Unmarshal(raw, &rec); err != nil {
		return cliFail(env, name, fmt.Errorf("the server's answer is not a request record: %w", err))
	}
	if rec.Status == events.StatusPending {
		fmt.Fprintf(env.stdout, "%s: passed up; it now waits for %s\n", cliCell(string(rec.ID)), cliRef(rec.Approver))
		return cliExitOK
	}
	fmt.Fprintf(env.stdout, "%s: %s\n", cliCell(string(rec.ID)), cliDecisionLine(&rec))
	return cliExitOK
}

// cliAnswerFailed reports a refused answer; a 409 is explained from the
// request's state now.
func cliAnswerFailed(ctx context.Context, c *cliClient, env cliEnv, name, path string, before *events.Request, err error) int {
	code := cliFail(env, name, err)
	var p *problem.Error
	if errors.As(err, &p) && p.Status == http.StatusConflict {
		fmt.Fprintln(env.stderr, cliConflictHint(ctx, c, path, before))
	}
	return code
}

func cliConflictHint(ctx context.Context, c *cliClient, path string, before *events.Request) string {
	var now events.Request
	if _, err := c.get(ctx, path, &now); err != nil {
		return "The request changed since it was read, or it is not yours to answer."
	}
	switch {
	case now.Status.Terminal():
		return "The request is already " + cliStatusLine(&now, time.Now()) + "; it can no longer be answered."
	case now.Revision != before.Revision:
		return fmt.Sprintf("The request changed while you answered (revision %d, now %d); it waits for %s. Run `countersign show %s` and answer again if it is yours.",
			before.Revision, now.Revision, cliRef(now.Approver), cliCell(string(now.ID)))
	case !now.DeadlineAt.IsZero() && !time.Now().Before(now.DeadlineAt):
		return "Its deadline has passed: no decision was made in time, and it can no longer be answered."
	}
	return "It is not yours to answer: it waits for " + cliRef(now.Approver) + "."
}
