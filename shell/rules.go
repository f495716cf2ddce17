package shell

import (
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a stage after quote removal; ok is false when the word
// is not plain (see plain).
type arg struct {
	text string
	ok   bool
}

func callStage(c *syntax.CallExpr) Stage {
	if len(c.Args) == 0 {
		return Stage{Opaque: OpaqueAssign}
	}
	args := make([]arg, 0, 2)
	for _, w := range c.Args[:min(2, len(c.Args))] {
		text, ok := plain(w)
		args = append(args, arg{text, ok})
	}
	s := stageOf(args, len(c.Assigns) > 0)
	if s.Opaque == "" && hasExtGlob(c.Args) {
		s.Opaque = OpaqueExtGlob
	}
	return s
}

// hasExtGlob: some argument holds an extended glob such as *(…) or @(…).
func hasExtGlob(words []*syntax.Word) bool {
	for _, w := range words {
		for _, part := range w.Parts {
			if _, ok := part.(*syntax.ExtGlob); ok {
				return true
			}
		}
	}
	return false
}

// declStage stages export, declare, local, readonly, typeset and nameref
// like a simple command whose arguments are their assignments.
func declStage(d *syntax.DeclClause) Stage {
	args := []arg{{d.Variant.Value, true}}
	if len(d.Args) > 0 {
		args = append(args, assignArg(d.Args[0]))
	}
	return stageOf(args, false)
}

// assignArg is an assignment as written (X=1, -x, X); an array or an
// indexed assignment is not plain.
func assignArg(a *syntax.Assign) arg {
	switch {
	case a.Index != nil || a.Array != nil:
		return arg{}
	case a.Naked && a.Name != nil:
		return arg{a.Name.Value, true}
	case a.Naked:
		return wordArg(a.Value)
	}
	op := map[bool]string{false: "=", true: "+="}[a.Append]
	v := wordArg(a.Value)
	return arg{a.Name.Value + op + v.text, v.ok}
}

func wordArg(w *syntax.Word) arg {
	if w == nil {
		return arg{ok: true}
	}
	text, ok := plain(w)
	return arg{text, ok}
}

// stageOf computes the prefix and the opaque reason of a stage from its
// first two words.
func stageOf(args []arg, assigns bool) Stage {
	var s Stage
	if args[0].ok && args[0].text != "" {
		s.Prefix = []string{args[0].text}
		if len(args) > 1 && args[1].ok && !strings.HasPrefix(args[1].text, "-") {
			s.Prefix = append(s.Prefix, args[1].text)
		}
	}
	s.Opaque = reasonOf(s.Prefix, args, assigns)
	return s
}

func reasonOf(prefix []string, args []arg, assigns bool) string {
	switch {
	case prefix == nil:
		return OpaqueCommandWord
	case runsCommand(args):
		return OpaqueRunner
	case assigns:
		return OpaqueAssign
	case len(args) > 1 && !args[1].ok:
		return OpaqueFirstArg
	}
	return ""
}

// runners run a command taken from their arguments, wherever the command
// word's path points (/bin/bash is bash; BASH is bash on a case-insensitive
// file system).
var runners = set(
	// shells: any arguments (bash -c '…' is one stage, its string unparsed)
	"sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "csh", "tcsh", "busybox",
	// builtins and keywords that run their arguments
	"eval", "exec", ".", "source", "command", "builtin", "trap", "time", "coproc", "fc",
	// wrappers that exec their arguments
	"env", "sudo", "doas", "su", "runuser", "pkexec", "xargs", "nohup", "nice", "timeout",
	"stdbuf", "setsid", "ionice", "taskset", "chrt", "chroot", "unshare", "nsenter", "flock",
	"watch", "parallel", "strace", "ltrace", "script", "ssh",
)

// subRunners run a command taken from the arguments after their first one
// ("uv run X": the prefix [uv run] would say nothing about X).
var subRunners = set(
	"uv run", "poetry run", "pipenv run", "conda run", "npm exec", "pnpm exec", "yarn exec",
	"bundle exec", "docker exec", "docker run", "kubectl exec", "git submodule",
)

func runsCommand(args []arg) bool {
	name := strings.TrimSuffix(strings.ToLower(path.Base(args[0].text)), ".exe")
	if runners[name] {
		return true
	}
	return len(args) > 1 && subRunners[name+" "+args[1].text]
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// redirReason is OpaqueRedirect when a redirection reads or writes a file.
func redirReason(rs []*syntax.Redirect) string {
	for _, r := range rs {
		if touchesFile(r) {
			return OpaqueRedirect
		}
	}
	return ""
}

// touchesFile: every redirection but a heredoc, a herestring, a
// duplication to a file descriptor (2>&1, >&2, <&3, >&3-, >&-) and
// /dev/null. ">&word" with a word that is not a descriptor writes a file.
func touchesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return false
	}
	text, ok := plain(r.Word)
	if r.Op == syntax.DplIn || r.Op == syntax.DplOut {
		return !ok || !descriptor.MatchString(text)
	}
	return !ok || text != "/dev/null"
}

var descriptor = regexp.MustCompile(`^([0-9]+-?|-)$`)
