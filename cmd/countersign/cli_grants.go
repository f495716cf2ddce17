package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"

	"github.com/countersign/countersign/events"
)

// cliGrants lists GET /v1/grants, every page.
func cliGrants(ctx context.Context, c *cliClient, o *cliOpts, env cliEnv) int {
	q := url.Values{}
	if o.agent != "" {
		q.Set("agent", o.agent)
	}
	if o.revoked {
		q.Set("revoked", "true")
	}
	items, err := c.list(ctx, "/v1/grants", q)
	if err != nil {
		return cliFail(env, "grants", err)
	}
	if o.json {
		return cliPrintItems(env, "grants", items)
	}
	gs, err := cliDecodeAll[events.Grant](items)
	if err != nil {
		return cliFail(env, "grants", err)
	}
	cliGrantTable(env.stdout, gs)
	return cliExitOK
}

func cliGrantTable(w io.Writer, gs []events.Grant) {
	if len(gs) == 0 {
		fmt.Fprintln(w, "No grants.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tCAPABILITY\tEFFECT\tSCOPE\tSESSION\tCREATED BY\tCREATED\tREVOKED")
	for _, g := range gs {
		revoked := "-"
		if g.RevokedAt != nil {
			revoked = cliTime(*g.RevokedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cliCell(string(g.ID)), cliCell(string(g.Agent)),
			cliCapability(g.Capability), cliCell(g.Effect), cliCell(g.Scope), cliCell(g.Session),
			cliRef(&g.CreatedBy), cliTime(g.CreatedAt), revoked)
	}
	tw.Flush()
}

// cliRevoke is DELETE /v1/grants/{id}.
func cliRevoke(ctx context.Context, c *cliClient, o *cliOpts, env cliEnv) int {
	raw, err := c.do(ctx, http.MethodDelete, cliPath("/v1/grants/", o.args[0]), nil)
	if err != nil {
		return cliFail(env, "revoke", err)
	}
	if o.json {
		cliWriteRaw(env.stdout, raw)
		return cliExitOK
	}
	var g events.Grant
	if err := json.Unmarshal(raw, &g); err != nil {
		return cliFail(env, "revoke", fmt.Errorf("the server's answer is not a grant: %w", err))
	}
	fmt.Fprintf(env.stdout, "%s revoked: %s %s for %s (%s); it no longer applies\n", cliCell(string(g.ID)),
		cliCell(g.Effect), cliCapability(g.Capability), cliCell(string(g.Agent)), cliCell(g.Scope))
	return cliExitOK
}
