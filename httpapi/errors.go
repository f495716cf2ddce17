package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/countersign/countersign/approvals"
)

// Problem is an application/problem+json body (SPEC §5).
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// statusError carries a status and code chosen by a handler itself.
type statusError struct {
	status int
	code   string
	detail string
	field  string
}

func (e *statusError) Error() string { return e.detail }

func badRequest(field, detail string) error {
	return &statusError{status: http.StatusBadRequest, code: "InvalidRequest", field: field, detail: detail}
}

var (
	errUnauthenticated = &statusError{status: http.StatusUnauthorized, code: "Unauthenticated", detail: "a valid bearer token is required"}
	errTooLarge        = &statusError{status: http.StatusRequestEntityTooLarge, code: "PayloadTooLarge", detail: "request bodies are limited to 1 MiB"}
	errNoRoute         = &statusError{status: http.StatusNotFound, code: "NotFound", detail: "no such endpoint"}
	errMethod          = &statusError{status: http.StatusMethodNotAllowed, code: "MethodNotAllowed", detail: "method not allowed on this endpoint"}
	errTooManyConns    = &statusError{status: http.StatusTooManyRequests, code: "RateLimited", detail: "too many connections; retry shortly"}
)

func forbidden(detail string) error {
	return &statusError{status: http.StatusForbidden, code: "Forbidden", detail: detail}
}

// sentinels maps the approvals errors to status and code: the one table.
var sentinels = []struct {
	err    error
	status int
	code   string
}{
	{approvals.ErrUnauthenticated, http.StatusUnauthorized, "Unauthenticated"},
	{approvals.ErrForbidden, http.StatusForbidden, "Forbidden"},
	{approvals.ErrNotFound, http.StatusNotFound, "RequestNotFound"},
	{approvals.ErrGrantNotFound, http.StatusNotFound, "GrantNotFound"},
	{approvals.ErrOtherNotFound, http.StatusNotFound, "NotFound"},
	{approvals.ErrIdempotencyKey, http.StatusUnprocessableEntity, "IdempotencyKeyReused"},
	{approvals.ErrConflict, http.StatusConflict, "RequestConflict"},
	{approvals.ErrRateLimited, http.StatusTooManyRequests, "RateLimited"},
	{approvals.ErrUnavailable, http.StatusServiceUnavailable, "Unavailable"},
}

// problemFor maps any error to its problem: an error none of the above
// names is 500 Internal, never 503 (SPEC §5: 503 only when NATS is
// unreachable, which approvals reports as ErrUnavailable).
func problemFor(err error) Problem {
	var se *statusError
	var inv *approvals.InvalidError
	var ce *approvals.ClaimError
	switch {
	case errors.As(err, &se):
		return newProblem(se.status, se.code, se.detail, se.field)
	case errors.As(err, &inv):
		return newProblem(http.StatusBadRequest, "InvalidRequest", inv.Detail, inv.Field)
	case errors.As(err, &ce):
		p := newProblem(http.StatusConflict, "RequestConflict", "the approval cannot be claimed: "+ce.Reason, "")
		p.Reason = ce.Reason
		return p
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return newProblem(s.status, s.code, detailOf(err), "")
		}
	}
	return newProblem(http.StatusInternalServerError, "Internal",
		"the server failed unexpectedly; the server log has the details under this X-Request-ID", "")
}

// detailOf drops the package prefixes of joined errors for display.
func detailOf(err error) string {
	parts := strings.Split(err.Error(), "\n")
	d := parts[len(parts)-1]
	return strings.TrimPrefix(strings.TrimPrefix(d, "approvals: "), "kvstate: ")
}

func newProblem(status int, code, detail, field string) Problem {
	return Problem{Type: "https://countersign.dev/problems/" + code, Title: http.StatusText(status),
		Status: status, Detail: detail, Error: code, Field: field}
}

func writeProblem(w http.ResponseWriter, p Problem) {
	if p.Status == http.StatusServiceUnavailable || p.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	_ = writeEncoded(w, p.Status, "application/problem+json", p)
}
