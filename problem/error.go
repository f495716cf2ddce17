package problem

import (
	"fmt"
	"net/http"
	"strconv"
)

// Error is a refusal: the HTTP status, the problem's error code, the field
// or reason it is about and a detail for people. It is made where the rule
// lives and travels up unchanged; every surface maps it with From.
//
// A package's sentinel refusals are *Error values; With, Withf, WithReason
// and Wrap return copies, so the sentinels are never changed. errors.Is
// matches two *Error values by Status and Code, so a copy with its own
// detail is still the sentinel it came from.
type Error struct {
	Status int    // the HTTP status (the bus's Nats-Service-Error-Code)
	Code   string // the problem's error, e.g. RequestConflict
	Field  string // the input field the refusal is about, if any
	Reason string // a finer code, e.g. a claim's digest_mismatch
	Detail string // for people; never internal error text
	cause  error  // for logs only; never shown to a client
}

// New is a refusal with status, code and detail.
func New(status int, code, detail string) *Error {
	return &Error{Status: status, Code: code, Detail: detail}
}

// Invalid is the 400 InvalidRequest refusal about field.
func Invalid(field, detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalid, Field: field, Detail: detail}
}

// CodeInvalid is the code of bad input (Invalid).
const CodeInvalid = "InvalidRequest"

// Error is the code, the detail, the field and the reason, then the cause
// when there is one: "RequestConflict: request is approved".
func (e *Error) Error() string {
	s := e.Code
	if s == "" {
		s = "HTTP " + strconv.Itoa(e.Status)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	if e.Reason != "" {
		s += " (reason " + e.Reason + ")"
	}
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

// Unwrap is the cause given to Wrap, or nil.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is an *Error with the same status and code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status && t.Code == e.Code
}

// With is a copy of e whose detail is detail.
func (e *Error) With(detail string) *Error {
	c := *e
	c.Detail = detail
	return &c
}

// Withf is With of a formatted detail.
func (e *Error) Withf(format string, args ...any) *Error {
	return e.With(fmt.Sprintf(format, args...))
}

// WithReason is a copy of e whose reason is reason.
func (e *Error) WithReason(reason string) *Error {
	c := *e
	c.Reason = reason
	return &c
}

// Wrap is a copy of e caused by err: errors.Is and errors.As see err, logs
// see its text, and clients see only e's problem.
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.cause = err
	return &c
}

// Problem is e's problem+json body.
func (e *Error) Problem() Problem {
	return Problem{Type: TypeBase + e.Code, Title: http.StatusText(e.Status), Status: e.Status,
		Detail: e.Detail, Error: e.Code, Field: e.Field, Reason: e.Reason}
}
