package review

import "errors"

var (
	// ErrNoAgent is returned by Serve without the For option.
	ErrNoAgent = errors.New("review: no tenant and agent (use review.For)")
	// ErrBadOffer wraps why an offer could not be decoded.
	ErrBadOffer = errors.New("review: bad offer")
	// ErrAnswer wraps an answer countersign refused (other than 409).
	ErrAnswer = errors.New("review: answer refused")
	// ErrConflict is an answer countersign found stale or repeated (409):
	// someone answered first, or the request moved on.
	ErrConflict = errors.New("review: answer conflicts (the request moved on)")
)
