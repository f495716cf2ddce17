package display

import (
	"bytes"
	"encoding/json"
	"strings"
)

// JSON shows stored JSON for people: indented two spaces a level, each
// new line starting with prefix, every key and string shown by JSONText
// between double quotes; numbers and the order of keys stay as stored.
// Text that is not JSON is shown as one JSONText string.
func JSON(raw json.RawMessage, prefix string) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, prefix, "  ") != nil {
		return `"` + JSONText(string(raw)) + `"`
	}
	return showStrings(b.String())
}

// showStrings rewrites each string literal of valid JSON s through
// JSONText.
func showStrings(s string) string {
	var out strings.Builder
	for {
		start := strings.IndexByte(s, '"')
		if start < 0 {
			out.WriteString(s)
			return out.String()
		}
		end := literalEnd(s, start)
		var v string
		_ = json.Unmarshal([]byte(s[start:end]), &v) // valid: json.Indent checked it
		out.WriteString(s[:start] + `"` + JSONText(v) + `"`)
		s = s[end:]
	}
}

// literalEnd returns the index just past the string literal opening at
// s[start].
func literalEnd(s string, start int) int {
	for i := start + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
}
