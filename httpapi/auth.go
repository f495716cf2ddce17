package httpapi

import (
	"net/http"
	"strings"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
)

// caller authenticates the bearer token (401) and checks scope (403); an
// empty scope accepts any valid token. It reads headers only, never the
// body, so handlers call it first.
func (a *API) caller(r *http.Request, scope string) (approvals.Caller, error) {
	tok, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return approvals.Caller{}, errUnauthenticated
	}
	t, token, ok := a.svc.Views().Authenticate(tok)
	if !ok {
		return approvals.Caller{}, errUnauthenticated
	}
	if scope != "" && !token.Has(scope) {
		return approvals.Caller{}, forbidden("this token lacks the " + scope + " scope")
	}
	return approvals.Caller{Tenant: t, Principal: token.Principal, Token: token}, nil
}

// agentCaller is caller for endpoints only agents use.
func (a *API) agentCaller(r *http.Request, scope string) (approvals.Caller, error) {
	c, err := a.caller(r, scope)
	if err == nil && c.Principal.Kind != events.KindAgent {
		return c, forbidden("only agent principals may do this")
	}
	return c, err
}

// bearerToken takes the token of "Bearer <token>"; the scheme's case does
// not matter (RFC 7235 §2.1).
func bearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", false
	}
	return tok, true
}
