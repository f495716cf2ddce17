package problem

import (
	"encoding/json"
	"errors"
	"net/http"
)

// TypeBase prefixes a problem's code to make its type.
const TypeBase = "https://countersign.dev/problems/"

// Problem is the one shape of a refusal on every surface (SPEC §5): the
// application/problem+json body over HTTP, the body of a bus error reply
// (whose Nats-Service-Error-Code is Status and Nats-Service-Error is
// Error), and the data of a JSON-RPC error.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Internal is the refusal of an error nobody named: 500, never retryable,
// and its text is not shown.
var Internal = New(http.StatusInternalServerError, "Internal", "the server failed unexpectedly")

// From is the problem of err: that of the first *Error in its tree, else
// Internal's. It never looks at err's text.
func From(err error) Problem {
	var e *Error
	if errors.As(err, &e) {
		return e.Problem()
	}
	return Internal.Problem()
}

// Retryable reports whether the problem carries Retry-After (429, 503).
func (p Problem) Retryable() bool {
	return p.Status == http.StatusTooManyRequests || p.Status == http.StatusServiceUnavailable
}

// Err is the refusal p describes, as a client received it.
func (p Problem) Err() *Error {
	return &Error{Status: p.Status, Code: p.Error, Field: p.Field, Reason: p.Reason, Detail: p.Detail}
}

// Parse is the refusal of a non-2xx answer with status and body. A body
// that is not a problem with an error code gives an *Error with the status
// alone (no code, no detail); the status of the answer wins over the
// body's.
func Parse(status int, body []byte) *Error {
	var p Problem
	if err := json.Unmarshal(body, &p); err != nil || p.Error == "" {
		return &Error{Status: status}
	}
	p.Status = status
	return p.Err()
}
