package httpapi

import (
	"net/http"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/problem"
)

// Refusals this surface makes itself, before any use case.
var (
	errTooLarge     = approvals.ErrTooLarge
	errNoRoute      = problem.New(http.StatusNotFound, "NotFound", "no such endpoint")
	errMethod       = problem.New(http.StatusMethodNotAllowed, "MethodNotAllowed", "method not allowed on this endpoint")
	errTooManyConns = problem.New(http.StatusTooManyRequests, "RateLimited", "too many connections; retry shortly")
)

// writeProblem writes p as application/problem+json (SPEC §5), with
// Retry-After when it is retryable.
func writeProblem(w http.ResponseWriter, p problem.Problem) {
	if p.Retryable() {
		w.Header().Set("Retry-After", "1")
	}
	_ = writeEncoded(w, p.Status, "application/problem+json", p)
}
