package rpc_test

import "testing"

// TestExactNames: on /v1/rpc, too, names match only byte-for-byte (SPEC
// §5; camelCase here): a decide with "ChoiceId", "APPROVALID" or
// "ſourceIndex" (U+017F), names encoding/json would fold onto a member,
// is -32602 naming it, and a request object with "METHOD" or "Params" is
// an invalid request (answered with its id); the request is left pending
// at revision 0.
func TestExactNames(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"inbox": true})
	id := submit(t, s, tokMain, map[string]any{"tool": "deploy"})["id"].(string)
	n := w.expect("approval/requested", id)
	req := n.Params["currentRequirementId"]
	for _, tc := range []struct {
		what   string
		params map[string]any
		field  string
	}{
		{"ChoiceId beside choiceId", map[string]any{"approvalId": id, "requirementId": req, "choiceId": "deny", "ChoiceId": "allow_once"}, "ChoiceId"},
		{"ChoiceId alone", map[string]any{"approvalId": id, "requirementId": req, "ChoiceId": "allow_once"}, "ChoiceId"},
		{"APPROVALID", map[string]any{"APPROVALID": id, "requirementId": req, "choiceId": "allow_once"}, "APPROVALID"},
		{"nested Revision", map[string]any{"approvalId": id, "requirementId": map[string]any{"sourceIndex": 0, "Revision": 0}, "choiceId": "allow_once"}, "requirementId.Revision"},
		{"long s in sourceIndex", map[string]any{"approvalId": id, "requirementId": map[string]any{"ſourceIndex": 0, "revision": 0}, "choiceId": "allow_once"}, "requirementId.ſourceIndex"},
	} {
		wantError(t, tc.what, w.call("approval/decide", tc.params), -32602, "InvalidRequest", tc.field)
	}
	for _, tc := range []struct{ what, msg string }{
		{"METHOD", `{"jsonrpc":"2.0","id":7,"METHOD":"approval/subscribe","params":{"inbox":true}}`},
		{"Params", `{"jsonrpc":"2.0","id":7,"method":"approval/subscribe","Params":{"inbox":true}}`},
		{"long s in sessionIds", `{"jsonrpc":"2.0","id":7,"method":"approval/subscribe","params":{"ſessionIds":["s"]}}`},
	} {
		w.write([]byte(tc.msg))
		m := w.read()
		if string(m.ID) != "7" {
			t.Errorf("%s: answered with id %s, want 7: %s", tc.what, m.ID, m.raw)
		}
		code := -32600
		if tc.what == "long s in sessionIds" {
			code = -32602
		}
		wantError(t, tc.what, m, code)
	}
	if rec := record(t, s, tokPerson, id); rec["revision"] != 0.0 || rec["status"] != "pending" {
		t.Errorf("refused decides changed the request: %v at %v", rec["status"], rec["revision"])
	}
}
