package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
)

// caller authenticates the bearer token (401) and checks scope (403); an
// empty scope accepts any valid token. The rule is approvals.Authenticate,
// shared with the bus.
func (a *API) caller(r *http.Request, scope string) (approvals.Caller, error) {
	return a.svc.Authenticate(r.Header.Get("Authorization"), scope)
}

// agentCaller is caller for endpoints only agents use.
func (a *API) agentCaller(r *http.Request, scope string) (approvals.Caller, error) {
	return a.svc.AuthenticateAgent(r.Header.Get("Authorization"), scope)
}
