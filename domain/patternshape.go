package domain

import (
	"fmt"
	"strings"
)

// ShellTools are the harnesses' shell tools (SPEC §8), the default of a
// tenant's shell_tools: Claude Code's Bash, Codex's shell and
// exec_command, Gemini CLI's run_shell_command, and the Responses API's
// local_shell. Their calls are shell requests whatever they declare
// (Tenant.ShellTool), and no read rule may reach them.
var ShellTools = []string{"Bash", "shell", "run_shell_command", "exec_command", "local_shell"}

// actions are the v1 capability actions, as patterns begin them.
var actions = []string{ActionToolsCall + ":", ActionAppsCall + ":", ActionAgentsDelegate + ":", ActionAgentsSpawn + ":"}

// CheckPattern refuses a capability pattern that can match no capability
// (SPEC §10): empty, a character no capability holds (whitespace, regex
// syntax such as ^ $ ( ) [ ] { } | + ? \, anything outside letters, digits
// and _ . : / @ - besides '*'), or a start that no action:target has
// (delete_*, tool.call:*, Tools.Call:*). Such a pattern in a deny list
// would fail open. The error says why, without a line.
func CheckPattern(p string) error {
	if p == "" {
		return fmt.Errorf("capability pattern is empty")
	}
	for _, r := range p {
		if !patternChar(r) {
			return fmt.Errorf("capability pattern %q holds %q, which no capability has (patterns are action:target with * as the only wildcard)", p, r)
		}
	}
	for _, a := range actions {
		if couldStartWith(p, a) {
			return nil
		}
	}
	return fmt.Errorf("capability pattern %q matches no capability: a capability is action:target with action tools.call, apps.call, agents.delegate or agents.spawn (case-sensitive)", p)
}

// patternChar reports whether r may appear in a pattern: a character of
// some capability (a tool name's letters, digits and _ . : / @ -, SPEC §5)
// or the wildcard.
func patternChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:/@-*", r)
}

// couldStartWith reports whether pattern p matches some string that
// begins with prefix and goes on past it: the text before p's first '*'
// and prefix agree as far as both go, and p reaches past prefix.
func couldStartWith(p, prefix string) bool {
	lit, _, star := strings.Cut(p, "*")
	if !star {
		return len(p) > len(prefix) && strings.HasPrefix(p, prefix)
	}
	return strings.HasPrefix(lit, prefix) || strings.HasPrefix(prefix, lit)
}

// CheckReadRule refuses a read rule that reaches beyond reads (SPEC §10):
// besides CheckPattern, a read rule names its action in full, tools.call:
// or apps.call: (so no agents.* capability and no bare *), names a tool
// with at least one letter or digit of its own (not tools.call:*; an
// apps.call rule names it after the connection's /), and matches none of
// the shell tools: ShellTools and the tenant's own (shellTools, its
// shell_tools).
func CheckReadRule(p string, shellTools ...string) error {
	if err := CheckPattern(p); err != nil {
		return err
	}
	var tool string
	switch {
	case strings.HasPrefix(p, ActionToolsCall+":"):
		tool = strings.TrimPrefix(p, ActionToolsCall+":")
	case strings.HasPrefix(p, ActionAppsCall+":"):
		target := strings.TrimPrefix(p, ActionAppsCall+":")
		i := strings.LastIndexByte(target, '/')
		if i < 0 {
			return fmt.Errorf("read rule %q names no tool: an apps.call read rule is apps.call:<connection>/<tool>", p)
		}
		tool = target[i+1:]
	default:
		return fmt.Errorf("read rule %q reaches beyond reads: a read rule begins tools.call: or apps.call: (never *, agents.spawn or agents.delegate)", p)
	}
	if !strings.ContainsFunc(tool, func(r rune) bool {
		return r != '*' && r != '_' && r != '.' && r != ':' && r != '/' && r != '@' && r != '-'
	}) {
		return fmt.Errorf("read rule %q reaches beyond reads: it matches every tool; name the reading tools (tools.call:read_*)", p)
	}
	for _, s := range append(ShellTools[:len(ShellTools):len(ShellTools)], shellTools...) {
		if Match(tool, s) {
			return fmt.Errorf("read rule %q matches the shell tool %s, which runs any command: it is never a read", p, s)
		}
	}
	return nil
}
