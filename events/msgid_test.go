package events

import "testing"

// ParseMsgID reads back exactly what MsgID and GrantMsgID write, and
// nothing else.
func TestParseMsgID(t *testing.T) {
	req, grt := NewRequestID(), NewGrantID()
	for _, s := range []string{MsgID(req, 0), MsgID(req, 17), GrantMsgID(grt, false), GrantMsgID(grt, true)} {
		id, ok := ParseMsgID(s)
		if !ok {
			t.Fatalf("ParseMsgID(%q) not ok", s)
		}
		back := MsgID(id.Request, id.Revision)
		if id.Grant != "" {
			back = GrantMsgID(id.Grant, id.Revoked)
		}
		if back != s {
			t.Errorf("ParseMsgID(%q) = %+v, which writes %q", s, id, back)
		}
	}
	for _, s := range []string{"", "42", string(req), string(req) + ":", string(req) + ":01", string(req) + ":-1", string(req) + ":1:2",
		string(req) + ":created", string(grt) + ":0", string(grt) + ":deleted", "req_x:0", "req_01JC0000000000000000000000.>:0"} {
		if id, ok := ParseMsgID(s); ok {
			t.Errorf("ParseMsgID(%q) = %+v, want not ok", s, id)
		}
	}
}
