package shell

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a stage after quote removal; ok is false when the word
// is not plain (see plain); one is true when the word is sure to stay one
// word (plain, or quoted), so it can never split into flags.
type arg struct {
	text string
	ok   bool
	one  bool
}

func callStage(c *syntax.CallExpr) Stage {
	if len(c.Args) == 0 {
		return Stage{Opaque: OpaqueAssign}
	}
	args := make([]arg, len(c.Args))
	for i, w := range c.Args {
		args[i] = wordArg(w)
	}
	s := stageOf(args[:min(2, len(args))], len(c.Assigns) > 0)
	if s.Opaque == "" && hasExtGlob(c.Args) {
		s.Opaque = OpaqueExtGlob
	}
	if s.Opaque == "" {
		s.Opaque, s.Argv = argsReason(args)
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
	args := []arg{{d.Variant.Value, true, true}}
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
		return arg{a.Name.Value, true, true}
	case a.Naked:
		return wordArg(a.Value)
	}
	op := map[bool]string{false: "=", true: "+="}[a.Append]
	v := wordArg(a.Value)
	return arg{a.Name.Value + op + v.text, v.ok, v.ok}
}

func wordArg(w *syntax.Word) arg {
	if w == nil {
		return arg{ok: true, one: true}
	}
	text, ok := plain(w)
	return arg{text, ok, ok || oneWord(w)}
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

// argsReason is why a stage whose prefix could cover it is opaque after
// all, and its words when only a grant of exactly them may cover it (when
// every word is plain): an interpreter; a command the table does not have;
// a row's command given a flag or subcommand the row does not know; or,
// with no words, a row's command given an argument that runs code (see
// known).
func argsReason(args []arg) (string, []string) {
	name := commandName(args[0].text)
	if interpreters[name] {
		return OpaqueInterpreter, argvOf(args)
	}
	k, ok := known[rowName(args[0].text)]
	if !ok {
		return OpaqueNotInTable, argvOf(args)
	}
	switch k.judge(args[1:]) {
	case runs:
		return OpaqueRunsCode, nil
	case unknown:
		return OpaqueUnknownArg, argvOf(args)
	}
	return "", nil
}

// argvOf is the words of a stage, or nil when one of them is not plain.
func argvOf(args []arg) []string {
	argv := make([]string, len(args))
	for i, a := range args {
		if !a.ok {
			return nil
		}
		argv[i] = a.text
	}
	return argv
}

// commandName is the name a command word runs, as the tables key it: its
// base name (a path's last element), lowercased (PYTHON3 is python3 on a
// case-insensitive file system), without ".exe", and without a version
// (python3.12, lua5.4, ksh93) when the name with it is in no table.
func commandName(word string) string {
	name := strings.ToLower(word[strings.LastIndexAny(word, `/\`)+1:])
	name = strings.TrimSuffix(name, ".exe")
	if bare := strings.TrimRight(name, "0123456789.-_"); bare != "" && !listed(name) {
		return bare
	}
	return name
}

// rowName is the row of the table a command word names: its name when it
// is bare or under a system directory, lowercased and without ".exe", and
// with no version taken off; "" for any other path: ./ls or /tmp/x/git is
// a program of the working tree, not the command the row reads.
func rowName(word string) string {
	dir, name := "", word
	if i := strings.LastIndexAny(word, `/\`); i >= 0 {
		dir, name = word[:i], word[i+1:]
	}
	if dir != "" && !systemDirs[dir] {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(name), ".exe")
}

var systemDirs = set("/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin", "/sbin", "/usr/sbin")

func listed(name string) bool {
	_, ok := known[name]
	return ok || interpreters[name] || runners[name]
}

// interpreters run code given in their arguments or in a file they name
// (SPEC §8): only a grant of the stage's exact words covers them.
var interpreters = set(
	// shells: bash -c '…' is one stage, its string unparsed
	"sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "csh", "tcsh", "yash", "pwsh", "powershell",
	// builtins that run their arguments as shell code or a command
	"eval", "exec", ".", "source", "command", "builtin",
	// language interpreters and evaluators
	"python", "python2", "python3", "pythonw", "pypy", "pypy3", "ipython", "node", "nodejs", "deno", "bun",
	"ts-node", "tsx", "perl", "ruby", "irb", "php", "lua", "luajit", "awk", "gawk", "mawk", "nawk",
	"rscript", "r", "julia", "osascript", "tclsh", "wish", "expect", "jshell", "groovy", "scala", "swift",
	"erl", "escript", "elixir", "iex", "guile", "racket", "sbcl", "clisp", "ocaml", "runghc", "ghci",
	// editors that run commands given with -c, +cmd or --eval
	"vi", "vim", "nvim", "ex", "view", "emacs",
)

// runners run a command taken from their arguments: no grant ever covers
// them.
var runners = set(
	"trap", "time", "coproc", "fc", "busybox",
	"env", "sudo", "doas", "su", "runuser", "pkexec", "xargs", "nohup", "nice", "timeout",
	"stdbuf", "setsid", "ionice", "taskset", "chrt", "chroot", "unshare", "nsenter", "flock",
	"watch", "parallel", "strace", "ltrace", "gdb", "lldb", "valgrind", "perf", "script",
	"systemd-run", "xvfb-run", "tmux", "screen", "unbuffer", "caffeinate", "hyperfine", "entr",
	"at", "batch", "sg", "newgrp", "sshpass", "proxychains", "proxychains4", "torsocks", "firejail",
	"bwrap", "numactl", "prlimit", "cgexec", "faketime", "fakeroot", "eatmydata", "npx", "bunx", "pipx",
)

// subRunners run a command taken from the arguments after their first one
// ("uv run X": the prefix [uv run] would say nothing about X).
var subRunners = set(
	"uv run", "poetry run", "pipenv run", "conda run", "npm exec", "npm x", "pnpm exec", "yarn exec",
	"pnpm dlx", "yarn dlx", "bundle exec", "docker exec", "docker run", "kubectl exec", "git submodule",
)

func runsCommand(args []arg) bool {
	name := commandName(args[0].text)
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
// duplication to a file descriptor (2>&1, >&2, <&3, >&3-, >&-) and the
// device files that are the process's own streams (/dev/null,
// /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N). Any other /dev path
// is a file: bash opens /dev/tcp/host/port and /dev/udp/… as network
// connections, and /dev/sda is a disk. ">&word" with a word that is not a
// descriptor writes a file.
func touchesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return false
	}
	text, ok := plain(r.Word)
	if r.Op == syntax.DplIn || r.Op == syntax.DplOut {
		return !ok || !descriptor.MatchString(text)
	}
	return !ok || !streamDevice.MatchString(text)
}

var (
	descriptor   = regexp.MustCompile(`^([0-9]+-?|-)$`)
	streamDevice = regexp.MustCompile(`^/dev/(null|stdin|stdout|stderr|fd/[0-9]+)$`)
)
