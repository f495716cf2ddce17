package hook

import (
	"encoding/json"
	"slices"

	"github.com/countersign/countersign/events"
)

// shellSubject returns the shell subject of a call of one of the
// harnesses' shell tools (events.ShellTools: Claude Code's Bash, Codex's
// shell, Gemini CLI's run_shell_command), decided stage by stage, or nil
// for any other tool (events.ShellSubject).
func shellSubject(tool string, args json.RawMessage) *events.Subject {
	if !slices.Contains(events.ShellTools, tool) {
		return nil
	}
	return events.ShellSubject(args)
}
