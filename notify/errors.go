package notify

import "errors"

// Sentinel errors.
var (
	// ErrConfig: an endpoint or the worker is misconfigured.
	ErrConfig = errors.New("notify: bad configuration")
	// ErrSignature: a Slack request's signature or timestamp is wrong.
	ErrSignature = errors.New("notify: bad signature")
)
