package hook

import (
	"encoding/json"
	"slices"

	"github.com/countersign/countersign/domain"
)

// shellSubject returns the shell subject of a call of one of the
// harnesses' shell tools (domain.ShellTools: Claude Code's Bash, Codex's
// shell, Gemini CLI's run_shell_command), decided stage by stage, or nil
// for any other tool (domain.ShellSubject).
func shellSubject(tool string, args json.RawMessage) *domain.Subject {
	if !slices.Contains(domain.ShellTools, tool) {
		return nil
	}
	return domain.ShellSubject(args)
}
