package events

import (
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
func CallDigest(b CallBinding) (string, error) {
	if len(b.Arguments) == 0 {
		b.Arguments = json.RawMessage("null")
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return "", err
	}
	canon, err := Canonicalize(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
