package adapter

import (
	"context"
	"encoding/json"
	"fmt"
)

// NotRunError is the error a guarded function returns when its call did not
// run. It wraps ErrNotRun and the Outcome's cause; its text is the
// Outcome's wording.
type NotRunError struct{ Outcome Outcome }

func (e *NotRunError) Error() string { return e.Outcome.String() }

// Unwrap lets errors.Is find ErrNotRun and the Outcome's cause.
func (e *NotRunError) Unwrap() []error {
	if e.Outcome.Err == nil {
		return []error{ErrNotRun}
	}
	return []error{ErrNotRun, e.Outcome.Err}
}

// Guard returns fn gated by c: each call of the returned function submits
// a request for the capability in tmpl (tmpl.Tool or tmpl.Capability) with
// the JSON encoding of its input as the arguments (it must encode to an
// object), waits as Do does, and calls fn only with a valid, claimed
// approval. When the call does not run, the returned function returns the
// zero Out and a *NotRunError (an input that does not encode to a JSON
// object gives ErrInvalidCall instead). tmpl's other fields (Reason, Timeout,
// Session, …) apply to every call; its IdempotencyKey is ignored (each call
// is a new request). Use Do for per-call turn or tool-call ids.
func Guard[In, Out any](c *Client, tmpl Call, fn func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		var out Out
		args, err := json.Marshal(in)
		if err != nil {
			return out, fmt.Errorf("%w: arguments: %v", ErrInvalidCall, err)
		}
		call := tmpl
		call.Arguments, call.IdempotencyKey = args, ""
		o, err := c.Do(ctx, call, func(ctx context.Context) error {
			var runErr error
			out, runErr = fn(ctx, in)
			return runErr
		})
		if err == nil && o.Kind != Ran {
			return out, &NotRunError{Outcome: o}
		}
		return out, err
	}
}
