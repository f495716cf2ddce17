package mcpproxy

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// isShellTool reports whether t is a shell tool (SPEC §8): its only string
// argument is "command". Its calls are sent as shell subjects, decided
// stage by stage.
func isShellTool(t *mcp.Tool) bool {
	var schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	raw, err := json.Marshal(t.InputSchema)
	if err != nil || json.Unmarshal(raw, &schema) != nil {
		return false
	}
	var strs []string
	for name, p := range schema.Properties {
		if p.Type == "string" {
			strs = append(strs, name)
		}
	}
	return len(strs) == 1 && strs[0] == "command"
}
