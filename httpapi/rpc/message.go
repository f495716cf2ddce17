package rpc

import (
	"bytes"
	"encoding/json"

	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/jcs"
	"github.com/countersign/countersign/problem"
)

// Call is one decoded member of a client's message: a request (ID set,
// answered), a notification (ID nil, never answered), or a member that
// is not a valid request (Err set, answered with Err and ID, or null).
type Call struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Err    *Error
	// Response is set when the member is the client's response to a
	// request of the server (approval/request); it is never answered.
	Response *ClientResponse
}

// ClientResponse is a client's JSON-RPC 2.0 response to a server's
// request: Result or Error.
type ClientResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Notification reports whether c expects no answer.
func (c Call) Notification() bool { return c.ID == nil && c.Err == nil }

// wireCall is a JSON-RPC 2.0 request object; nothing else is accepted.
type wireCall struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// Decode reads one WebSocket message: a request object or a batch (an
// array of them). It returns the calls and whether the message was a
// batch; a message that is not JSON is one call with a -32700 error, an
// empty batch one with -32600. Each member of a batch is decoded on its
// own, so one bad member leaves the others valid.
func Decode(msg []byte) ([]Call, bool) {
	t := bytes.TrimSpace(msg)
	if !json.Valid(t) {
		return []Call{{Err: newError(CodeParse, "parse error: the message is not JSON")}}, false
	}
	if t[0] != '[' {
		return []Call{decodeCall(t)}, false
	}
	var members []json.RawMessage
	if err := json.Unmarshal(t, &members); err != nil || len(members) == 0 {
		return []Call{{Err: newError(CodeInvalidRequest, "invalid request: an empty batch")}}, false
	}
	calls := make([]Call, len(members))
	for i, m := range members {
		calls[i] = decodeCall(m)
	}
	return calls, true
}

// decodeCall checks one request object strictly: JSON without duplicate
// keys or invalid UTF-8, no unknown members (names byte-for-byte), "jsonrpc": "2.0", a method,
// an id that is a string, a number or null, params an object if present.
func decodeCall(raw json.RawMessage) Call {
	var w wireCall
	canon, err := jcs.Canonicalize(raw)
	if err != nil || bytes.TrimSpace(raw)[0] != '{' {
		return Call{Err: newError(CodeInvalidRequest, "invalid request: not a strict JSON object")}
	}
	if isResponse(canon) {
		return decodeResponse(raw, canon)
	}
	if err := wire.ExactNames(canon, &w); err != nil {
		return Call{ID: exactID(canon), Err: newError(CodeInvalidRequest, "invalid request: "+problem.From(err).Detail)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(&w)
	id := w.ID
	if !validID(id) {
		id = nil
	}
	switch {
	case err != nil:
		return Call{ID: id, Err: newError(CodeInvalidRequest, "invalid request: "+err.Error())}
	case w.JSONRPC != "2.0":
		return Call{ID: id, Err: newError(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)}
	case w.Method == "":
		return Call{ID: id, Err: newError(CodeInvalidRequest, `invalid request: "method" is required`)}
	case !validID(w.ID):
		return Call{Err: newError(CodeInvalidRequest, `invalid request: "id" must be a string, a number or null`)}
	case w.Params != nil && !isObject(w.Params):
		return Call{ID: w.ID, Err: newError(CodeInvalidParams, `invalid params: "params" must be an object`)}
	}
	return Call{ID: w.ID, Method: w.Method, Params: w.Params}
}

// isResponse reports whether the object canon is a response (a "result"
// or an "error", and no "method").
func isResponse(canon []byte) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(canon, &members) != nil {
		return false
	}
	_, result := members["result"]
	_, failed := members["error"]
	_, method := members["method"]
	return (result || failed) && !method
}

// decodeResponse checks a response strictly: "jsonrpc": "2.0", a string
// or number id, exactly one of result and error.
func decodeResponse(raw json.RawMessage, canon []byte) Call {
	var r ClientResponse
	if err := wire.ExactNames(canon, &r); err != nil {
		return Call{Err: newError(CodeInvalidRequest, "invalid response: "+problem.From(err).Detail)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&r)
	switch {
	case err != nil:
		return Call{Err: newError(CodeInvalidRequest, "invalid response: "+err.Error())}
	case r.JSONRPC != "2.0" || r.ID == nil || !validID(r.ID) || (r.Result != nil) == (r.Error != nil):
		return Call{Err: newError(CodeInvalidRequest, `invalid response: "jsonrpc": "2.0", an "id", and one of "result" and "error"`)}
	}
	return Call{Response: &r}
}

// exactID is the member named exactly "id" of the object canon, if it is
// a valid id.
func exactID(canon []byte) json.RawMessage {
	var members map[string]json.RawMessage
	if json.Unmarshal(canon, &members) != nil || !validID(members["id"]) {
		return nil
	}
	return members["id"]
}

// validID: absent, null, a string or a number.
func validID(id json.RawMessage) bool {
	if id == nil {
		return true
	}
	switch c := bytes.TrimSpace(id)[0]; {
	case c == 'n', c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return false
}

func isObject(p json.RawMessage) bool {
	t := bytes.TrimSpace(p)
	return len(t) > 0 && t[0] == '{'
}

// Response is a JSON-RPC 2.0 response: Result or Error, never both.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Notification is a JSON-RPC 2.0 notification from the server.
type Notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

func respond(id json.RawMessage, result any, e *Error) Response {
	if id == nil {
		id = json.RawMessage("null")
	}
	return Response{JSONRPC: "2.0", ID: id, Result: result, Error: e}
}
