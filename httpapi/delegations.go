package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

// endDelegation serves DELETE /v1/agents/{id}/delegations/{session} (the
// session path-escaped): 200 with the ended delegation.
func (a *API) endDelegation(w http.ResponseWriter, r *http.Request) error {
	c, err := a.admit(r, approvals.OpEndDelegation)
	if err != nil {
		return err
	}
	d, err := a.svc.EndDelegation(r.Context(), c, events.AgentID(r.PathValue("id")), r.PathValue("session"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d)
}
