package signin

import (
	"errors"
	"fmt"
)

var (
	// ErrNoSession: no live session has that token.
	ErrNoSession = errors.New("signin: no such session")
	// ErrNoFlow: the state names no pending sign-in (unknown, expired or
	// already used).
	ErrNoFlow = errors.New("signin: no such sign-in in progress")
	// ErrRefused: the provider's answer is not one to sign in with (the
	// ID token failed verification, or the claim is missing).
	ErrRefused = errors.New("signin: refused")
	// ErrUnverified wraps ErrRefused: with claim email, the verified ID
	// token does not say email_verified: true. The identity comes back
	// with it (its claim is the token's, and the token verified).
	ErrUnverified = fmt.Errorf("%w: email not verified", ErrRefused)
	// ErrPending: the person has not finished the device flow yet.
	ErrPending = errors.New("signin: authorization pending")
	// ErrConfig: the Config is incomplete.
	ErrConfig = errors.New("signin: bad config")
)
