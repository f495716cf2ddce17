package rpc

import (
	"errors"
	"net/http"

	"github.com/countersign/countersign/approvals"
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

// errorFor maps any error to its JSON-RPC error through approvals.ProblemFor.
func errorFor(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	p := approvals.ProblemFor(err)
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
	errNoWrite      = approvals.NewProblem(http.StatusForbidden, "Forbidden", "this token lacks the approvals:write scope", "").Err()
	errStale        = approvals.NewProblem(http.StatusConflict, "RequestConflict", "requirementId is not the request's current requirement", "").Err()
	errUnwatched    = approvals.NewProblem(http.StatusConflict, "RequestConflict", "a protected write is decided only while a client is subscribed to its session", "").Err()
	errNotOffered   = approvals.Invalid("choiceId", "this choice is not offered to you for the current requirement").Err()
	errNeedsReason  = approvals.Invalid("reason", "this choice requires a reason").Err()
	errNoSub        = approvals.Invalid("subscriptionId", "no such subscription on this connection").Err()
	errTooManySubs  = approvals.NewProblem(http.StatusTooManyRequests, "RateLimited", "too many subscriptions on this connection", "").Err()
	errNotWebSocket = approvals.Invalid("Upgrade", "GET /v1/rpc upgrades to a WebSocket (JSON-RPC 2.0)").Err()
)
