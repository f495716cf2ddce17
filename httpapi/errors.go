package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
)

// Problem is an application/problem+json body (SPEC §5); the mapping from
// errors to problems is approvals.ProblemFor, shared with the bus.
type Problem = approvals.Problem

// Refusals this surface makes itself, before any use case.
var (
	errTooLarge     = approvals.ErrTooLarge
	errNoRoute      = approvals.NewProblem(http.StatusNotFound, "NotFound", "no such endpoint", "").Err()
	errMethod       = approvals.NewProblem(http.StatusMethodNotAllowed, "MethodNotAllowed", "method not allowed on this endpoint", "").Err()
	errTooManyConns = approvals.NewProblem(http.StatusTooManyRequests, "RateLimited", "too many connections; retry shortly", "").Err()
)

func badRequest(field, detail string) error { return approvals.Invalid(field, detail).Err() }

// problemFor maps any error to its problem: approvals.ProblemFor.
func problemFor(err error) Problem { return approvals.ProblemFor(err) }

func writeProblem(w http.ResponseWriter, p Problem) {
	if p.Retryable() {
		w.Header().Set("Retry-After", "1")
	}
	_ = writeEncoded(w, p.Status, "application/problem+json", p)
}
