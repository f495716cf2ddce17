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
// for any other tool. A call whose command cannot be read gets an empty
// command, which the server refuses: the call does not run.
func shellSubject(tool string, args json.RawMessage) *events.Subject {
	if !shellTools[tool] {
		return nil
	}
	cmd, _ := events.ShellCommand(args)
	return &events.Subject{Kind: events.SubjectShell, Command: cmd}
}
