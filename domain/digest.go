package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/countersign/countersign/jcs"
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
// canonical JSON of b. It fails only if b.Arguments is not strict JSON
// (the errors of jcs.Canonicalize); empty arguments are null.
func CallDigest(b CallBinding) (string, error) {
	canon, err := appendBinding(make([]byte, 0, len(b.Arguments)+256), b)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// appendBinding appends the canonical form of b through the canonical
// writer (package jcs), its members already in RFC 8785 order: agent, arguments
// (canonicalized), capability{action, target}, connection{id, revision} or
// null, session, tenant, tool_call_id, turn.
func appendBinding(dst []byte, b CallBinding) ([]byte, error) {
	args := []byte(b.Arguments)
	if len(args) == 0 {
		args = []byte("null")
	}
	dst = jcs.AppendString(appendKey(dst, '{', "agent"), b.Agent)
	dst, err := jcs.Append(appendKey(dst, ',', "arguments"), args)
	if err != nil {
		return nil, err
	}
	dst = appendKey(dst, ',', "capability")
	dst = jcs.AppendString(appendKey(dst, '{', "action"), b.Capability.Action)
	dst = append(jcs.AppendString(appendKey(dst, ',', "target"), b.Capability.Target), '}')
	dst = appendConnection(appendKey(dst, ',', "connection"), b.Connection)
	for _, m := range [...]struct{ key, val string }{
		{"session", b.Session}, {"tenant", b.Tenant}, {"tool_call_id", b.ToolCallID}, {"turn", b.Turn},
	} {
		dst = jcs.AppendString(appendKey(dst, ',', m.key), m.val)
	}
	return append(dst, '}'), nil
}

// appendKey appends sep, then key and a colon.
func appendKey(dst []byte, sep byte, key string) []byte {
	return append(jcs.AppendString(append(dst, sep), key), ':')
}

func appendConnection(dst []byte, c *Connection) []byte {
	if c == nil {
		return append(dst, "null"...)
	}
	dst = jcs.AppendString(appendKey(dst, '{', "id"), c.ID)
	dst = jcs.AppendES6(appendKey(dst, ',', "revision"), float64(c.Revision))
	return append(dst, '}')
}
