package judge

import "errors"

// Errors returned by [Model.Complete] implementations in this package and by
// [Config.Validate]. [Judge.Judge] and [Judge.Review] never return an error:
// they map every failure to a Reason and an escalation (or abstention).
var (
	// ErrConfig: a Config field is missing or out of range.
	ErrConfig = errors.New("judge: invalid config")
	// ErrTimeout: the model call ran past its deadline (the request's own
	// deadline or Config.Timeout, whichever is sooner).
	ErrTimeout = errors.New("judge: model call timed out")
	// ErrHTTP: the endpoint answered a non-2xx status, or the transport failed.
	ErrHTTP = errors.New("judge: model endpoint error")
	// ErrRefusal: the model refused (message.refusal set, or finish_reason
	// "content_filter").
	ErrRefusal = errors.New("judge: model refused")
	// ErrMalformed: the completion envelope or the model's answer is not the
	// JSON the contract requires.
	ErrMalformed = errors.New("judge: malformed model answer")
)
