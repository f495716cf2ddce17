package adapter

import "errors"

// Sentinel errors. An Outcome's Err wraps one of them, so that callers can
// tell the causes apart with errors.Is; their texts are worded for people.
var (
	// ErrInvalidCall: the Call cannot be submitted (no capability, arguments
	// that are not a JSON object, no run function). Nothing was submitted.
	ErrInvalidCall = errors.New("adapter: invalid call")

	// ErrUnreachable: countersign could not be reached, or kept failing,
	// before the adapter's limit.
	ErrUnreachable = errors.New("adapter: countersign could not be reached")

	// ErrWaitLimit: the adapter's own wait limit passed before a decision.
	ErrWaitLimit = errors.New("adapter: the wait limit passed before a decision")

	// ErrRefused: countersign refused the request (a 4xx answer other than
	// a claim conflict): a bad token, a missing scope, invalid input. The
	// server's refusal is in the chain too: errors.As(err, &p) with
	// p *problem.Error gives its status, error, field, reason and detail.
	ErrRefused = errors.New("adapter: countersign refused the request")

	// ErrBadResponse: countersign answered something the adapter cannot
	// trust (an unknown status, an approval without a decision, the wrong
	// request). The adapter fails closed.
	ErrBadResponse = errors.New("adapter: countersign answered nonsense")

	// ErrDigestMismatch: the approval is bound to a different call than the
	// one about to run (call_digest differs).
	ErrDigestMismatch = errors.New("adapter: the approval is for a different call")

	// ErrEdited: a person approved the call only with edits (other
	// arguments), and this harness cannot run the call with them
	// (Call.TakeEdits is nil).
	ErrEdited = errors.New("adapter: the call was approved only with edits this harness cannot apply")

	// ErrAlreadyClaimed: the approval was already used by a call; it runs at
	// most once.
	ErrAlreadyClaimed = errors.New("adapter: the approval was already used")

	// ErrNotApproved: the server would not let the approval be claimed
	// because the request is not approved.
	ErrNotApproved = errors.New("adapter: the request is not approved")

	// ErrApprovalExpired: the approval expired before the call could start.
	ErrApprovalExpired = errors.New("adapter: the approval expired before the call could start")

	// ErrAbandoned: the caller's context was cancelled while the call waited.
	ErrAbandoned = errors.New("adapter: the call was abandoned")

	// ErrNotRun is wrapped by the error a Guard-ed function returns when
	// the call did not run.
	ErrNotRun = errors.New("adapter: the call did not run")
)
