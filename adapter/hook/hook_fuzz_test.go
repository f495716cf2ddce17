package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzRead: the hook's stdin parser never panics, and what it accepts is a
// named tool with JSON arguments.
func FuzzRead(f *testing.F) {
	seeds := []string{
		`{"session_id":"s-1","turn_id":"t-1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`,
		`{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}}`,
		`{"tool_name":"x","tool_input":null}`, `{"tool_name":"x","tool_input":[1]}`, `{"tool_name":"  "}`,
		`{"tool_name":"x","tool_input":{"s":"\ud800","a":1,"a":2,"n":12345678901234567890}}`,
		`{"tool_name":`, `null`, `[]`, ``, "{\"tool_name\":\"\xff\"}",
	}
	for _, s := range seeds {
		f.Add([]byte(s), 0)
	}
	formats := []Format{Claude, Codex, Gemini}
	f.Fuzz(func(t *testing.T, in []byte, format int) {
		fm := formats[uint(format)%uint(len(formats))]
		call, err := read(fm, bytes.NewReader(in))
		if err != nil {
			return
		}
		if strings.TrimSpace(call.Tool) == "" || !json.Valid(call.Arguments) {
			t.Fatalf("read(%q) = tool %q, arguments %q", in, call.Tool, call.Arguments)
		}
	})
}
