package rpc

import (
	"encoding/json"

	"github.com/countersign/countersign/approvals/wire"
)

// Methods.
const (
	MethodSubscribe   = "approval/subscribe"
	MethodUnsubscribe = "approval/unsubscribe"
	MethodDecide      = "approval/decide"
	MethodResume      = "session/resume"
	MethodPage        = "view/page"
)

// MethodRequest is the server's request form of approval/requested,
// answered by the client's result (AskResult).
const MethodRequest = "approval/request"

// Notifications.
const (
	NotifyRequested = "approval/requested"
	NotifyUpdated   = "approval/updated"
	NotifyResolved  = "approval/resolved"
)

// method runs one call; after (if not nil) runs once its response is
// queued, so that what follows a result (a subscription's snapshot) never
// overtakes it.
type method func(c *conn, params json.RawMessage) (result any, after func(), err error)

var methods = map[string]method{
	MethodSubscribe:   (*conn).subscribe,
	MethodUnsubscribe: (*conn).unsubscribe,
	MethodDecide:      (*conn).decide,
	MethodResume:      (*conn).resume,
	MethodPage:        (*conn).page,
}

// handle answers one message: each call in order, a batch with one array
// of the responses (none for notifications).
func (c *conn) handle(msg []byte) {
	calls, batch := Decode(msg)
	var out []Response
	var afters []func()
	for _, call := range calls {
		resp, after := c.call(call)
		if !call.Notification() {
			out = append(out, resp)
		}
		if after != nil {
			afters = append(afters, after)
		}
	}
	c.reply(out, batch)
	for _, f := range afters {
		f()
	}
}

func (c *conn) reply(out []Response, batch bool) {
	switch {
	case len(out) == 0:
	case batch:
		c.send(out)
	default:
		c.send(out[0])
	}
}

// call runs one call and builds its response.
func (c *conn) call(call Call) (Response, func()) {
	if call.Response != nil {
		c.answered(call.Response)
		return Response{}, nil
	}
	if call.Err != nil {
		return respond(call.ID, nil, call.Err), nil
	}
	m, ok := methods[call.Method]
	if !ok {
		return respond(call.ID, nil, newError(CodeMethod, "method not found: "+call.Method)), nil
	}
	result, after, err := m(c, call.Params)
	if err != nil {
		return respond(call.ID, nil, errorFor(err)), nil
	}
	return respond(call.ID, result, nil), after
}

// decodeParams reads params strictly into v (SPEC §5: unknown fields are
// 400); absent params read as {}.
func decodeParams(raw json.RawMessage, v any) error {
	if raw == nil {
		raw = json.RawMessage("{}")
	}
	_, err := wire.Decode(raw, v)
	return err
}
