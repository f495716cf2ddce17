package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/problem"
)

// admit authenticates the bearer token (401) and checks that its caller
// may run op (403): approvals.Admit, the one owner of each operation's
// scope and principal kind, shared with the bus and JSON-RPC. With
// sign-in configured, a token it does not know may be a session
// (sessionCaller), as may the session cookie; the same rule then holds.
func (a *API) admit(r *http.Request, op approvals.Op) (approvals.Caller, error) {
	c, err := a.svc.Admit(r.Header.Get("Authorization"), op)
	if err != nil && a.signIn != nil && problem.From(err).Status == http.StatusUnauthorized {
		if c, err = a.sessionCaller(r); err != nil {
			return c, err
		}
		return c, approvals.Permit(c, op)
	}
	return c, err
}
