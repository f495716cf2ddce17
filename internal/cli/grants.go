package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"

	"github.com/countersign/countersign/domain"
)

// GrantFilter narrows Grants.
type GrantFilter struct {
	Agent   string // only this agent's grants; "": every agent's
	Revoked bool   // include revoked grants
}

// Grants lists GET /v1/grants, every page.
func (s Session) Grants(ctx context.Context, f GrantFilter) error {
	q := url.Values{}
	if f.Agent != "" {
		q.Set("agent", f.Agent)
	}
	if f.Revoked {
		q.Set("revoked", "true")
	}
	var pp people
	if !s.JSON {
		pp = s.Client.people(ctx)
	}
	return list(ctx, s, "/v1/grants", q, func(w io.Writer, gs []domain.Grant) { grantTable(w, gs, pp) })
}

func grantTable(w io.Writer, gs []domain.Grant, p people) {
	if len(gs) == 0 {
		fmt.Fprintln(w, "No grants.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tCAPABILITY\tEFFECT\tSCOPE\tSESSION\tCREATED BY\tCREATED\tREVOKED")
	for _, g := range gs {
		revoked := "-"
		if g.RevokedAt != nil {
			revoked = stamp(*g.RevokedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(string(g.ID)), cell(string(g.Agent)),
			capability(g.Capability), cell(g.Effect), cell(g.Scope), cell(g.Session),
			p.ref(&g.CreatedBy), stamp(g.CreatedAt), revoked)
	}
	tw.Flush()
}

// Revoke is DELETE /v1/grants/{id}.
func (s Session) Revoke(ctx context.Context, id string) error {
	raw, err := s.Client.do(ctx, http.MethodDelete, apiPath("/v1/grants/", id), nil)
	if err != nil {
		return err
	}
	if s.JSON {
		writeRaw(s.Out, raw)
		return nil
	}
	var g domain.Grant
	if err := json.Unmarshal(raw, &g); err != nil {
		return fmt.Errorf("the server's answer is not a grant: %w", err)
	}
	fmt.Fprintf(s.Out, "%s revoked: %s %s for %s (%s); it no longer applies\n", cell(string(g.ID)),
		cell(g.Effect), capability(g.Capability), cell(string(g.Agent)), cell(g.Scope))
	return nil
}
