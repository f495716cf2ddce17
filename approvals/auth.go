package approvals

import "github.com/countersign/countersign/approvals/wire"

// Refusals of Authenticate, with the detail a caller sees.
var errNoToken = ErrUnauthenticated.With("a valid bearer token is required")

// Sessions is the authenticator hook of a surface that also knows
// sign-in sessions (SPEC §13): asked only when the Authorization header
// holds no token of the config, it returns the session's caller (a
// person, approvals:read and approvals:write, Session set) or its own
// refusal (ErrUnauthenticated, ErrForbidden for a missing CSRF header,
// ErrUnavailable). nil: a surface without sessions.
type Sessions func() (Caller, error)

// Authenticate turns an Authorization header value ("Bearer <token>") into
// the caller, for every surface alike (HTTP, the bus, JSON-RPC): an absent,
// malformed or unknown token is ErrUnauthenticated (401), unless sessions
// (when not nil) knows the call's session. What the caller may do is
// Permit's (policy.go), which its operation's Endpoint asks.
func (s *Service) Authenticate(authorization string, sessions Sessions) (Caller, error) {
	c, err := s.authenticate(authorization)
	if err != nil && sessions != nil {
		return sessions()
	}
	return c, err
}

func (s *Service) authenticate(authorization string) (Caller, error) {
	tok, ok := wire.BearerToken(authorization)
	if !ok {
		return Caller{}, errNoToken
	}
	t, token, ok := s.views.Authenticate(tok)
	if !ok {
		return Caller{}, errNoToken
	}
	return Caller{Tenant: t, Principal: token.Principal, Token: token}, nil
}
