package rpc_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/countersign/countersign/httpapi/rpc"
)

// decodeSeeds are the messages of the tests.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"approval/subscribe","params":{"sessionIds":["ses-1"]}}`,
	`{"jsonrpc":"2.0","id":"a","method":"approval/subscribe","params":{"inbox":true,"viewCursor":"req_01JC000000000000000000000:4"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"approval/decide","params":{"approvalId":"req_01JC000000000000000000000","requirementId":{"sourceIndex":0,"revision":0},"choiceId":"allow_once"}}`,
	`{"jsonrpc":"2.0","id":null,"method":"approval/unsubscribe","params":{"subscriptionId":"sub-1"}}`,
	`{"jsonrpc":"2.0","method":"approval/unsubscribe","params":{"subscriptionId":"x"}}`,
	`{"jsonrpc":"2.0",`, `{"id":1,"method":"approval/subscribe"}`, `{"jsonrpc":"1.0","id":1,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"method":"m","extra":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, `{"jsonrpc":"2.0","id":{},"method":"m"}`,
	`[]`, `"hello"`, `{"jsonrpc":"2.0","id":1,"method":"m","params":[true]}`,
	`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":""},3]`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}", `{"jsonrpc":"2.0","id":1e400,"method":"m"}`,
	// Names encoding/json would fold onto a member: case, U+017F for 's'.
	`{"jsonrpc":"2.0","id":1,"METHOD":"approval/subscribe"}`, `{"JSONRPC":"2.0","id":1,"method":"m"}`,
	`{"jsonrpc":"2.0","ID":1,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":"m","Params":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","param\u017f":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"approval/decide","params":{"approvalId":"a","ChoiceId":"allow_once"}}`,
}

// FuzzDecodeMessage: Decode never panics, returns at least one call, and
// each call is either an error or a method with object params (or none);
// its response encodes as JSON.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		calls, batch := rpc.Decode(msg)
		if len(calls) == 0 {
			t.Fatalf("no calls for %q", msg)
		}
		for _, c := range calls {
			checkCall(t, msg, c)
		}
		if batch && !json.Valid(msg) {
			t.Fatalf("a batch from invalid JSON %q", msg)
		}
		if !batch && calls[0].Err == nil {
			checkExactMembers(t, msg)
		}
	})
}

// members are the names of a JSON-RPC request object.
var members = map[string]bool{"jsonrpc": true, "id": true, "method": true, "params": true}

// checkExactMembers: an accepted request object's members are named
// exactly, and each renamed to a name encoding/json folds onto it (upper
// case, U+017F for 's') is an invalid request.
func checkExactMembers(t *testing.T, msg []byte) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(msg, &obj); err != nil {
		t.Fatalf("accepted %q: %v", msg, err)
	}
	for key, value := range obj {
		if !members[key] {
			t.Fatalf("accepted %q with member %q", msg, key)
		}
		for _, folded := range []string{strings.ToUpper(key), strings.ReplaceAll(key, "s", "\u017f")} {
			if folded == key {
				continue
			}
			m := maps.Clone(obj)
			delete(m, key)
			m[folded] = value
			b, _ := json.Marshal(m)
			if calls, _ := rpc.Decode(b); calls[0].Err == nil || calls[0].Err.Code != rpc.CodeInvalidRequest {
				t.Fatalf("%q with %q for %q: %+v, want an invalid request", msg, folded, key, calls[0])
			}
		}
	}
}

func checkCall(t *testing.T, msg []byte, c rpc.Call) {
	if (c.Err == nil) == (c.Method == "") {
		t.Fatalf("call %+v of %q: exactly one of Err and Method", c, msg)
	}
	if c.Err == nil && c.Params != nil && c.Params[0] != '{' {
		t.Fatalf("params %q of %q are not an object", c.Params, msg)
	}
	if c.ID != nil && !json.Valid(c.ID) {
		t.Fatalf("id %q of %q is not JSON", c.ID, msg)
	}
	if _, err := json.Marshal(rpc.Response{JSONRPC: "2.0", ID: c.ID, Error: c.Err}); err != nil && c.ID != nil {
		t.Fatalf("response of %q does not encode: %v", msg, err)
	}
}
