package hook

import (
	"encoding/json"

	"github.com/countersign/countersign/events"
)

// shellTools are the harnesses' shell tools (SPEC §8): Claude Code's Bash,
// Codex's shell, Gemini CLI's run_shell_command. Their calls are sent as
// shell subjects, decided stage by stage.
var shellTools = map[string]bool{"Bash": true, "shell": true, "run_shell_command": true}

// shellSubject returns the shell subject of a shell tool's call, or nil
// for any other tool (events.ShellSubject).
func shellSubject(tool string, args json.RawMessage) *events.Subject {
	if !shellTools[tool] {
		return nil
	}
	return events.ShellSubject(args)
}
