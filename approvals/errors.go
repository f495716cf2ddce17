package approvals

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/countersign/countersign/problem"
)

// Sentinel refusals: each is a *problem.Error with its status and code.
// The use cases return copies with their own detail (With, Withf), which
// errors.Is still matches to the sentinel; problem.From maps them.
var (
	ErrUnauthenticated = problem.New(http.StatusUnauthorized, "Unauthenticated", "unauthenticated")
	ErrForbidden       = problem.New(http.StatusForbidden, "Forbidden", "forbidden")
	ErrNotFound        = problem.New(http.StatusNotFound, "RequestNotFound", "request not found")
	ErrGrantNotFound   = problem.New(http.StatusNotFound, "GrantNotFound", "grant not found")
	ErrOtherNotFound   = problem.New(http.StatusNotFound, "NotFound", "not found")
	ErrConflict        = problem.New(http.StatusConflict, "RequestConflict", "request conflict")
	ErrIdempotencyKey  = problem.New(http.StatusUnprocessableEntity, "IdempotencyKeyReused", "idempotency key reused with a different body")
	ErrUnavailable     = problem.New(http.StatusServiceUnavailable, "Unavailable", "state unavailable")
	ErrRateLimited     = problem.New(http.StatusTooManyRequests, "RateLimited", "too many long-polls held; retry shortly")
	ErrTooLarge        = problem.New(http.StatusRequestEntityTooLarge, "PayloadTooLarge", "request bodies are limited to 1 MiB")
)

// ErrConfig: a constructor was given a config it cannot run with. It is
// not a refusal of a caller.
var ErrConfig = errors.New("approvals: bad config")

// invalid is the 400 InvalidRequest refusal about field.
func invalid(field, format string, args ...any) *problem.Error {
	return problem.Invalid(field, fmt.Sprintf(format, args...))
}

// conflict is ErrConflict with a detail.
func conflict(format string, args ...any) *problem.Error {
	return ErrConflict.Withf("request conflict: "+format, args...)
}

// forbid is ErrForbidden with a detail.
func forbid(detail string) *problem.Error { return ErrForbidden.With(detail) }

// refuseClaim is a refused claim, a conflict whose reason is
// already_claimed, approval_expired, not_approved or digest_mismatch.
func refuseClaim(reason string) *problem.Error {
	return ErrConflict.With("the approval cannot be claimed: " + reason).WithReason(reason)
}
