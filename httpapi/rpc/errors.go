package rpc

import (
	"errors"
	"net/http"

	"github.com/countersign/countersign/problem"
)

// JSON-RPC 2.0 error codes: the protocol's own, then those of the use
// cases' problems (codeOfStatus).
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeMethod         = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
)

// codeOfStatus is the one table from a problem's HTTP status to its
// JSON-RPC code; the error's data is the problem itself. A status not in
// it is CodeInternal.
var codeOfStatus = map[int]int{
	http.StatusBadRequest:            CodeInvalidParams,
	http.StatusUnauthorized:          -32001,
	http.StatusForbidden:             -32003,
	http.StatusNotFound:              -32004,
	http.StatusConflict:              -32009,
	http.StatusGone:                  -32010,
	http.StatusRequestEntityTooLarge: -32013,
	http.StatusUnprocessableEntity:   -32022,
	http.StatusTooManyRequests:       -32029,
	http.StatusInternalServerError:   CodeInternal,
	http.StatusServiceUnavailable:    -32053,
}

// Error is a JSON-RPC error object. Data is the problem (SPEC §5) when the
// error comes from a use case or from bad params.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func newError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// errorFor maps any error to its JSON-RPC error through problem.From.
func errorFor(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	p := problem.From(err)
	code, ok := codeOfStatus[p.Status]
	if !ok {
		code = CodeInternal
	}
	msg := p.Detail
	if msg == "" {
		msg = p.Title
	}
	return &Error{Code: code, Message: msg, Data: p}
}

func (e *Error) Error() string { return e.Message }

// Refusals this surface makes itself.
var (
	errStale        = problem.New(http.StatusConflict, "RequestConflict", "request conflict: requirementId does not name the stage the request waits on")
	errNotOffered   = problem.Invalid("choiceId", "this choice is not offered to you for the current requirement")
	errNeedsReason  = problem.Invalid("reason", "this choice requires a reason")
	errNoSub        = problem.Invalid("subscriptionId", "no such subscription on this connection")
	errTooManySubs  = problem.New(http.StatusTooManyRequests, "RateLimited", "too many subscriptions on this connection")
	errNotWebSocket = problem.Invalid("Upgrade", "GET /v1/rpc upgrades to a WebSocket (JSON-RPC 2.0)")
)
