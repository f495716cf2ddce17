package approvals

import (
	"errors"
	"fmt"
)

// Sentinel errors; ProblemFor maps each to one status and problem code.
var (
	ErrUnauthenticated = errors.New("approvals: unauthenticated")
	ErrForbidden       = errors.New("approvals: forbidden")
	ErrNotFound        = errors.New("approvals: request not found")
	ErrGrantNotFound   = errors.New("approvals: grant not found")
	ErrOtherNotFound   = errors.New("approvals: not found")
	ErrConflict        = errors.New("approvals: request conflict")
	ErrIdempotencyKey  = errors.New("approvals: idempotency key reused with a different body")
	ErrUnavailable     = errors.New("approvals: state unavailable")
	ErrRateLimited     = errors.New("approvals: too many long-polls held; retry shortly")
	ErrTooLarge        = errors.New("approvals: request bodies are limited to 1 MiB")
	// ErrConfig: a constructor was given a config it cannot run with.
	ErrConfig = errors.New("approvals: bad config")
)

// InvalidError is bad input: Field names the offending field.
type InvalidError struct {
	Field  string
	Detail string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("approvals: invalid %s: %s", e.Field, e.Detail)
}

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Detail: fmt.Sprintf(format, args...)}
}

// ClaimError is a refused claim; Reason is already_claimed,
// approval_expired, not_approved or digest_mismatch.
type ClaimError struct{ Reason string }

func (e *ClaimError) Error() string { return "approvals: claim refused: " + e.Reason }

// Unwrap makes a ClaimError a conflict.
func (e *ClaimError) Unwrap() error { return ErrConflict }

// conflict wraps ErrConflict with a detail for the problem.
func conflict(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConflict, fmt.Sprintf(format, args...))
}
