package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

func (a *API) listGrants(w http.ResponseWriter, r *http.Request) error {
	c, err := a.caller(r, events.ScopeApprovalsRead)
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	f, err := approvals.ParseGrantFilter(q.Get("agent"), q.Get("effect"), q.Get("scope"), q.Get("revoked"), q.Get("limit"), q.Get("cursor"))
	if err != nil {
		return err
	}
	items, next := a.svc.ListGrants(r.Context(), c, f)
	return writePage(w, items, next, MaxPageBytes, func(g *events.Grant) string { return approvals.CursorAfter(string(g.ID)) })
}

func (a *API) revokeGrant(w http.ResponseWriter, r *http.Request) error {
	c, err := a.caller(r, events.ScopeApprovalsWrite)
	if err != nil {
		return err
	}
	g, err := a.svc.RevokeGrant(r.Context(), c, events.GrantID(r.PathValue("id")))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, g)
}
