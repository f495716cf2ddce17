package rpc_test

import (
	"encoding/json"
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
	})
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
