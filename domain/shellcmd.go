package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"strings"

	"github.com/countersign/countersign/jcs"
)

// ShellCommand reads the command of a shell tool's arguments: the
// "command" argument, given as a string (Claude Code's Bash, Gemini CLI's
// run_shell_command, MCP shell tools) or as an argv (Codex's shell:
// ["bash", "-lc", "script"] is the script; any other argv is its words
// quoted for the shell). A shell subject's command must be this text, so
// that the stages decided are those of the call that runs (SPEC §8).
func ShellCommand(arguments json.RawMessage) (string, bool) {
	var in struct {
		Command json.RawMessage `json:"command"`
	}
	if json.Unmarshal(arguments, &in) != nil || len(in.Command) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(in.Command, &s) == nil {
		return s, true
	}
	var argv []string
	if json.Unmarshal(in.Command, &argv) != nil || len(argv) == 0 {
		return "", false
	}
	if len(argv) == 3 && isShell(argv[0]) && (argv[1] == "-c" || argv[1] == "-lc") {
		return argv[2], true
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " "), true
}

// ShellArgumentsDigest is what a shell stage's grant binds besides the
// stage (SPEC §8): "sha256:" and the lowercase hex SHA-256 of the JCS
// canonical JSON of the call's arguments without "command" and without
// the labels that only tell people what the call is for (shellLabels);
// "" when nothing else is left. A call that adds "env", another "cwd" or
// "workdir", or any other argument, has another digest. ok is false when
// the arguments are not a JSON object.
func ShellArgumentsDigest(arguments json.RawMessage) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(arguments, &m) != nil || m == nil {
		return "", false
	}
	delete(m, "command")
	for _, k := range shellLabels {
		delete(m, k)
	}
	if len(m) == 0 {
		return "", true
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", false
	}
	canon, err := jcs.Canonicalize(raw)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), true
}

// shellLabels are shell tools' arguments that only label a call for
// people and change nothing it runs: Claude Code's and Gemini CLI's
// "description", Codex's "justification". Each call has its own, so a
// grant that bound them would never cover a second call.
var shellLabels = []string{"description", "justification"}

// ShellSubject is the subject an adapter sends for a shell tool's call:
// kind shell with the command of its arguments. A command that cannot be
// read is sent empty, which the server refuses: the call does not run.
func ShellSubject(arguments json.RawMessage) *Subject {
	cmd, _ := ShellCommand(arguments)
	return &Subject{Kind: SubjectShell, Command: cmd}
}

func isShell(prog string) bool {
	switch path.Base(prog) {
	case "sh", "bash", "zsh", "dash":
		return true
	}
	return false
}

// shellQuote writes a as one shell word: bare when plainly safe, else
// single-quoted.
func shellQuote(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
