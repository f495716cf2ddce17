package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// CallBinding is everything one approval is bound to (SPEC §4, "Exact-call
// binding"). Absent strings are "".
type CallBinding struct {
	Tenant     string          `json:"tenant"`
	Agent      string          `json:"agent"`
	Session    string          `json:"session"`
	Turn       string          `json:"turn"`
	ToolCallID string          `json:"tool_call_id"`
	Capability Capability      `json:"capability"`
	Arguments  json.RawMessage `json:"arguments"`
	Connection *Connection     `json:"connection"`
}

// CallDigest returns "sha256:" and the lowercase hex SHA-256 of the JCS
// canonical JSON of b. It fails only if b.Arguments is not strict JSON.
//
// The canonical form is written directly: the members in RFC 8785 order
// (agent, arguments, capability{action, target}, connection{id, revision}
// or null, session, tenant, tool_call_id, turn), the arguments
// canonicalized on their own.
func CallDigest(b CallBinding) (string, error) {
	args := []byte(b.Arguments)
	if len(args) == 0 {
		args = []byte("null")
	}
	canonArgs, err := Canonicalize(args)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	buf.Grow(len(canonArgs) + 256)
	member := func(first bool, key string) {
		if !first {
			buf.WriteByte(',')
		}
		writeJCSString(&buf, key)
		buf.WriteByte(':')
	}
	buf.WriteByte('{')
	member(true, "agent")
	writeJCSString(&buf, b.Agent)
	member(false, "arguments")
	buf.Write(canonArgs)
	member(false, "capability")
	buf.WriteByte('{')
	member(true, "action")
	writeJCSString(&buf, b.Capability.Action)
	member(false, "target")
	writeJCSString(&buf, b.Capability.Target)
	buf.WriteByte('}')
	member(false, "connection")
	if c := b.Connection; c != nil {
		buf.WriteByte('{')
		member(true, "id")
		writeJCSString(&buf, c.ID)
		member(false, "revision")
		buf.WriteString(FormatES6(float64(c.Revision)))
		buf.WriteByte('}')
	} else {
		buf.WriteString("null")
	}
	for _, kv := range [][2]string{{"session", b.Session}, {"tenant", b.Tenant}, {"tool_call_id", b.ToolCallID}, {"turn", b.Turn}} {
		member(false, kv[0])
		writeJCSString(&buf, kv[1])
	}
	buf.WriteByte('}')
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
