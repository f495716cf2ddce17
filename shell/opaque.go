package shell

// Why a stage is opaque: never covered by a grant or a read rule, so it
// always reaches a decider (SPEC §8). The strings are stable; callers may
// show them.
const (
	// OpaqueEmpty: the command is empty or only blanks.
	OpaqueEmpty = "empty command"
	// OpaqueUnparsable: the command does not parse as bash.
	OpaqueUnparsable = "does not parse"
	// OpaqueTooLong: the command is longer than MaxLen bytes.
	OpaqueTooLong = "command too long"
	// OpaqueTooMany: the rest of a command past its first MaxStages stages.
	OpaqueTooMany = "too many stages"
	// OpaqueTooDeep: a statement nested more than MaxDepth statements deep
	// (pipelines, lists, substitutions, compound commands), with all it holds.
	OpaqueTooDeep = "nested too deep"
	// OpaqueNoCommand: the command parses but has no simple command
	// (only comments, tests or arithmetic); also a statement made only of
	// redirections, such as "> file".
	OpaqueNoCommand = "no simple command"
	// OpaqueCommandWord: the command word is not a plain word: it holds a
	// parameter, command or arithmetic expansion, a glob, a tilde, a brace,
	// an ANSI-C or locale quote, or is empty. What runs is unknown.
	OpaqueCommandWord = "command word is not a plain word"
	// OpaqueFirstArg: the first argument is not a plain word (same test as
	// the command word): it could expand to anything, so the prefix would lie.
	OpaqueFirstArg = "first argument is not a plain word"
	// OpaqueRedirect: a redirection to or from a file, on the stage or on a
	// statement around it (a block, loop, subshell, or the command holding a
	// substitution). Duplications (2>&1, >&2, <&3, >&-), /dev/null, heredocs
	// and herestrings are not files.
	OpaqueRedirect = "redirection to or from a file"
	// OpaqueAssign: variable assignments before the command word
	// (PATH=/tmp x, LD_PRELOAD=… ls) change what runs; an assignment-only
	// statement changes what later stages run.
	OpaqueAssign = "variable assignment"
	// OpaqueExtGlob: an argument, any argument, holds an extended glob
	// (*(…), ?(…), +(…), @(…), !(…)). In zsh, which runs many agents' shell
	// tools, ls *(e:'rm -rf ~':) runs the code in the glob qualifier; bash
	// parses it as an extglob, so the stage would look like a plain ls.
	OpaqueExtGlob = "extended glob in an argument"
	// OpaqueRunner: the command runs another command taken from its
	// arguments (env, sudo, xargs, nice, timeout, …; see runners), so its
	// prefix says nothing about what runs.
	OpaqueRunner = "runs a command from its arguments"
	// OpaqueInterpreter: the command is an interpreter or evaluator (a
	// shell, python, node, awk, eval, source, …; see interpreters): what it
	// runs is in its arguments or a file, so no prefix covers it. When its
	// words are all plain, Stage.Argv holds them, and only a grant of exactly
	// those words (shell_argv) covers it.
	OpaqueInterpreter = "interpreter: only a grant of its exact words covers it"
	// OpaqueRunsCode: a command of countersign's table (see known) is
	// given an argument that runs code or a command, or writes a file it
	// names (find -exec, git -c, sed 's/x/y/e', tar --to-command=…), or an
	// argument that could expand to such a flag. No grant covers it.
	OpaqueRunsCode = "an argument runs code"
	// OpaqueNotInTable: the command is not a row of countersign's command
	// table (sqlite3, psql, dc, zip, podman, …), so countersign does not
	// know which of its arguments run code. When its words are all plain,
	// Stage.Argv holds them, and only a grant of exactly those words
	// covers it.
	OpaqueNotInTable = "not in the command table: only a grant of its exact words covers it"
	// OpaqueUnknownArg: a command of the table is given a flag or a
	// subcommand its row does not know (git branch -D, go generate, npm x).
	// As for OpaqueNotInTable, only a grant of its exact words covers it.
	OpaqueUnknownArg = "an argument the command table does not know: only a grant of its exact words covers it"
	// OpaqueBackquote: the stage is inside a `…` command substitution,
	// whose backslashes the shell reads twice, so its words after quote
	// removal are not sure to be the words that run.
	OpaqueBackquote = "inside a `…` substitution"
)

// exactOnly: a stage opaque for this reason is covered by a grant of its
// exact words, when it has them.
func exactOnly(reason string) bool {
	return reason == OpaqueNotInTable || reason == OpaqueUnknownArg
}

// first is the first non-empty reason.
func first(reasons ...string) string {
	for _, r := range reasons {
		if r != "" {
			return r
		}
	}
	return ""
}
