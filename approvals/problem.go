package approvals

import (
	"errors"
	"net/http"
	"strings"
)

// Problem is the one shape of a refusal on every surface (SPEC §5): the
// application/problem+json body over HTTP, and the body of a bus error
// reply whose Nats-Service-Error-Code is Status and Nats-Service-Error is
// Error. A *Problem is also an error, for refusals a surface makes itself
// (401 before any use case, 413, 405).
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// NewProblem builds a problem; its type is derived from the code.
func NewProblem(status int, code, detail, field string) *Problem {
	return &Problem{Type: "https://countersign.dev/problems/" + code, Title: http.StatusText(status),
		Status: status, Detail: detail, Error: code, Field: field}
}

// Invalid is the 400 InvalidRequest problem about field.
func Invalid(field, detail string) *Problem {
	return NewProblem(http.StatusBadRequest, "InvalidRequest", detail, field)
}

// problemError lets a *Problem travel as an error without making Problem
// itself satisfy error (its Error field is the code).
type problemError struct{ p *Problem }

func (e problemError) Error() string { return e.p.Detail }

// Err returns p as an error that ProblemFor maps back to p.
func (p *Problem) Err() error { return problemError{p} }

// Retryable reports whether the problem carries Retry-After (429, 503).
func (p Problem) Retryable() bool {
	return p.Status == http.StatusTooManyRequests || p.Status == http.StatusServiceUnavailable
}

// sentinels maps this package's errors to status and code: the one table.
var sentinels = []struct {
	err    error
	status int
	code   string
}{
	{ErrUnauthenticated, http.StatusUnauthorized, "Unauthenticated"},
	{ErrForbidden, http.StatusForbidden, "Forbidden"},
	{ErrNotFound, http.StatusNotFound, "RequestNotFound"},
	{ErrGrantNotFound, http.StatusNotFound, "GrantNotFound"},
	{ErrOtherNotFound, http.StatusNotFound, "NotFound"},
	{ErrIdempotencyKey, http.StatusUnprocessableEntity, "IdempotencyKeyReused"},
	{ErrConflict, http.StatusConflict, "RequestConflict"},
	{ErrRateLimited, http.StatusTooManyRequests, "RateLimited"},
	{ErrTooLarge, http.StatusRequestEntityTooLarge, "PayloadTooLarge"},
	{ErrUnavailable, http.StatusServiceUnavailable, "Unavailable"},
}

// ProblemFor maps any error to its problem. Anything it does not know is
// 500 Internal: unexpected, never retryable (503 is only ErrUnavailable).
func ProblemFor(err error) Problem {
	var pe problemError
	var inv *InvalidError
	var ce *ClaimError
	switch {
	case errors.As(err, &pe):
		return *pe.p
	case errors.As(err, &inv):
		return *Invalid(inv.Field, inv.Detail)
	case errors.As(err, &ce):
		p := NewProblem(http.StatusConflict, "RequestConflict", "the approval cannot be claimed: "+ce.Reason, "")
		p.Reason = ce.Reason
		return *p
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return *NewProblem(s.status, s.code, detailOf(err), "")
		}
	}
	return *NewProblem(http.StatusInternalServerError, "Internal", "the server failed unexpectedly", "")
}

// detailOf drops the package prefixes of joined errors for display.
func detailOf(err error) string {
	parts := strings.Split(err.Error(), "\n")
	d := parts[len(parts)-1]
	return strings.TrimPrefix(strings.TrimPrefix(d, "approvals: "), "kvstate: ")
}
