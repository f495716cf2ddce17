package links

import "errors"

// Sentinel errors of Check.
var (
	// ErrMalformed: the token does not decode to a claim.
	ErrMalformed = errors.New("links: malformed token")
	// ErrForged: the MAC does not match the claim under this secret.
	ErrForged = errors.New("links: token signature does not match")
	// ErrExpired: the request's deadline has passed.
	ErrExpired = errors.New("links: link expired")
)
