package approvals

import "strings"

// Refusals of Authenticate, with the detail a caller sees.
var errNoToken = ErrUnauthenticated.With("a valid bearer token is required")

const bearerPrefix = "Bearer"

// Authenticate turns an Authorization header value ("Bearer <token>") into
// the caller, for every surface alike (HTTP, the bus, JSON-RPC): an absent,
// malformed or unknown token is ErrUnauthenticated (401), a token without
// scope is ErrForbidden (403); an empty scope accepts any valid token. An
// operation's own scope and principal kind are Permit's (policy.go).
func (s *Service) Authenticate(authorization, scope string) (Caller, error) {
	tok, ok := bearerToken(authorization)
	if !ok {
		return Caller{}, errNoToken
	}
	t, token, ok := s.views.Authenticate(tok)
	if !ok {
		return Caller{}, errNoToken
	}
	if scope != "" && !token.Has(scope) {
		return Caller{}, forbid("this token lacks the " + scope + " scope")
	}
	return Caller{Tenant: t, Principal: token.Principal, Token: token}, nil
}

// bearerToken extracts the token of a "Bearer <token>" header value; the
// scheme's case does not matter (RFC 7235 §2.1).
func bearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, bearerPrefix) && tok != ""
}
