package mcpproxy

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestStripReasonKeepsTheRestByteForByte(t *testing.T) {
	tests := []struct{ in, args, reason, err string }{
		{`{"b":1,"a":2}`, `{"b":1,"a":2}`, "", ""},
		{`{"b":1,"countersign_reason":"why","a":2}`, `{"b":1,"a":2}`, "why", ""},
		{`{"countersign_reason":"why","b":1.50,"a":{"y":1,"x":2}}`, `{"b":1.50,"a":{"y":1,"x":2}}`, "why", ""},
		{`{"b":[1,2],"countersign_reason":"why"}`, `{"b":[1,2]}`, "why", ""},
		{`{"countersign_reason":"why"}`, `{}`, "why", ""},
		{` { "b" : 1 ,  "countersign_reason" : "w\u00e9" , "a" : 2 } `, ` { "b" : 1 , "a" : 2 } `, "wé", ""},
		{` {  "countersign_reason" : "w" ,  "a" : 2 }`, ` {  "a" : 2 }`, "w", ""},
		{`{"x":"countersign_reason","a":{"countersign_reason":1}}`, `{"x":"countersign_reason","a":{"countersign_reason":1}}`, "", ""},
		{`null`, `{}`, "", ""},
		{``, `{}`, "", ""},
		{`{"countersign_reason":1}`, "", "", "countersign_reason must be a string"},
		{`{"countersign_reason":"a","countersign_reason":"b"}`, "", "", "countersign_reason appears twice"},
		{`[1]`, "", "", "arguments must be a JSON object"},
		{`{"a":1}x`, "", "", "arguments must be a JSON object"},
	}
	for _, tt := range tests {
		args, reason, err := stripReason(json.RawMessage(tt.in))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("stripReason(%s) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(args) != tt.args || reason != tt.reason {
			t.Errorf("stripReason(%s) = %s, %q, %v; want %s, %q", tt.in, args, reason, err, tt.args, tt.reason)
		}
	}
}

// An MCP tool whose only string argument is "command" is a shell tool.
func TestIsShellTool(t *testing.T) {
	for _, tc := range []struct {
		schema string
		want   bool
	}{
		{`{"type":"object","properties":{"command":{"type":"string"}}}`, true},
		{`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"}}}`, true},
		{`{"type":"object","properties":{"command":{"type":"string"},"cwd":{"type":"string"}}}`, false},
		{`{"type":"object","properties":{"cmd":{"type":"string"}}}`, false},
		{`{"type":"object"}`, false},
	} {
		var schema map[string]any
		if err := json.Unmarshal([]byte(tc.schema), &schema); err != nil {
			t.Fatal(err)
		}
		if got := isShellTool(&mcp.Tool{Name: "run", InputSchema: schema}); got != tc.want {
			t.Errorf("%s: shell %v, want %v", tc.schema, got, tc.want)
		}
	}
}
