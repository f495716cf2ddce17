package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

func (a *API) listGrants(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpGrants)
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
	p, err := approvals.GrantPage(items, next)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, p)
}

func (a *API) revokeGrant(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpRevoke)
	if err != nil {
		return err
	}
	g, err := a.svc.RevokeGrant(r.Context(), c, events.GrantID(r.PathValue("id")))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, g)
}
