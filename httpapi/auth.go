package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
)

// admit authenticates the bearer token (401) and checks that its caller
// may run op (403): approvals.Admit, the one owner of each operation's
// scope and principal kind, shared with the bus and JSON-RPC.
func (a *API) admit(r *http.Request, op approvals.Op) (approvals.Caller, error) {
	return a.svc.Admit(r.Header.Get("Authorization"), op)
}
