package shell

import "strings"

// git: -c and --config-env set any configuration (core.fsmonitor,
// core.pager, alias.x=!cmd: each runs a command), and --exec-path chooses
// where git's own programs come from. Global options git does not list in
// gitGlobal, a subcommand not in gitSubs (an alias runs whatever it names),
// a subcommand's flag in gitSubRuns, or a config that writes, make the
// stage opaque.
var gitCmd = &knownCmd{
	runs:   gitGlobalRuns,
	safe:   gitGlobal,
	custom: gitRuns,
}

var gitGlobalRuns = []string{"-c", "--config-env", "--exec-path"}

var gitGlobal = flags(`-C= --git-dir= --work-tree= --namespace= -P --no-pager -p --paginate --bare
	--no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs
	--no-optional-locks --no-advice --no-lazy-fetch --version -v --help -h --html-path --man-path --info-path`)

// gitSubRuns are the flags of git subcommands that run a command or write a
// file they name. Git takes any unambiguous abbreviation of a long option
// (--exe for --exec), so a prefix of one of these is refused too.
var gitSubRuns = map[string][]string{
	"rebase":      {"--exec", "-x"},
	"difftool":    {"--extcmd", "-x"},
	"grep":        {"--open-files-in-pager", "-O"},
	"fetch":       {"--upload-pack"},
	"pull":        {"--upload-pack"},
	"clone":       {"--upload-pack", "-u", "--config", "-c", "--template"},
	"init":        {"--template"},
	"push":        {"--receive-pack", "--exec"},
	"ls-remote":   {"--upload-pack", "--exec"},
	"archive":     {"--exec"},
	"log":         {"--output"},
	"show":        {"--output"},
	"diff":        {"--output"},
	"whatchanged": {"--output"},
	"range-diff":  {"--output"},
	"diff-tree":   {"--output"},
	"diff-index":  {"--output"},
	"diff-files":  {"--output"},
	"bisect":      {"run"},
	"config":      {"set", "--add", "--replace-all", "--edit", "-e"},
}

// gitSubs are the git subcommands countersign knows; any other word (an
// alias, filter-branch, submodule, send-email, instaweb) is opaque.
var gitSubs = set("add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle",
	"cat-file", "check-attr", "check-ignore", "check-ref-format", "checkout", "cherry", "cherry-pick",
	"clean", "clone", "commit", "commit-tree", "config", "count-objects", "describe", "diff", "diff-files",
	"diff-index", "diff-tree", "difftool", "fetch", "for-each-ref", "format-patch", "fsck", "gc", "grep",
	"hash-object", "help", "init", "log", "ls-files", "ls-remote", "ls-tree", "maintenance", "merge",
	"merge-base", "mergetool", "mv", "name-rev", "notes", "pull", "push", "range-diff", "rebase", "reflog",
	"remote", "repack", "replace", "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "shortlog",
	"show", "show-branch", "show-ref", "sparse-checkout", "stash", "status", "switch", "symbolic-ref", "tag",
	"update-index", "update-ref", "var", "verify-commit", "verify-tag", "version", "whatchanged",
	"worktree", "write-tree")

// gitRuns reads git's global options, then its subcommand's arguments.
func gitRuns(args []arg) bool {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.ok {
			return true
		}
		if !strings.HasPrefix(a.text, "-") {
			break
		}
		name, _, attached := strings.Cut(a.text, "=")
		takes, ok := gitGlobal[name]
		if !ok || (attached && !takes) {
			return true
		}
		if takes && !attached && i+1 < len(args) {
			i++
			if v := args[i]; !v.one || (v.ok && riskyWord(gitGlobalRuns, false, v.text)) {
				return true
			}
		}
	}
	if i == len(args) {
		return false
	}
	sub := args[i].text
	if !gitSubs[sub] {
		return true
	}
	rest := args[i+1:]
	if sub == "config" {
		return !gitConfigReads(rest)
	}
	return flagRuns(gitSubRuns[sub], rest)
}

// flagRuns: some word is one of runs, an abbreviation of a long one, or a
// cluster holding a short one; a word that is not plain could be any of
// them, when there are any. Words after "--" are operands.
func flagRuns(runs []string, rest []arg) bool {
	if len(runs) == 0 {
		return false
	}
	for _, a := range rest {
		switch {
		case !a.ok:
			return true
		case a.text == "--":
			return false
		}
		for _, r := range runs {
			if gitFlagIs(a.text, r) {
				return true
			}
		}
	}
	return false
}

// gitFlagIs: w is flag r as git's option parser (or GNU getopt_long)
// would read it: --exec, --exe=x, -x, -qx.
func gitFlagIs(w, r string) bool {
	switch {
	case !strings.HasPrefix(r, "-"): // a word: bisect run
		return w == r
	case strings.HasPrefix(r, "--"):
		name, _, _ := strings.Cut(w, "=")
		return strings.HasPrefix(name, "--") && len(name) > 2 && strings.HasPrefix(r, name)
	}
	return len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.IndexByte(w[1:], r[1]) >= 0
}

// gitConfigReads: git config only reads (--get, --list, get, list, …),
// so it cannot set a command git runs later (core.fsmonitor, alias.x).
func gitConfigReads(rest []arg) bool {
	reads := false
	for _, a := range rest {
		if !a.ok {
			return false
		}
		for _, r := range gitSubRuns["config"] {
			if gitFlagIs(a.text, r) {
				return false
			}
		}
		reads = reads || gitConfigRead[a.text]
	}
	return reads
}

var gitConfigRead = set("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
	"-l", "--list", "get", "list")
