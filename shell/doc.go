// Package shell splits a shell command line into stages (SPEC §8, "Shell
// stages and grants"): [Split] parses the text with a real shell parser
// (mvdan.cc/sh/v3/syntax, bash dialect) and returns every simple command in
// source order, each with its prefix and, when no grant or read rule may
// ever cover it, the reason why. It imports only the standard library and
// that parser; it has no NATS and no state.
//
// # Stages
//
// A stage is every simple command (a command word and its arguments), and
// every export, declare, local, readonly or typeset, wherever it is: in
// lists (&&, ||, ;, &), pipelines, subshells, brace groups, if, while, for
// and case bodies, function bodies, command substitutions ($(…) and `…`),
// process substitutions, and substitutions inside heredoc bodies, double
// quotes, assignments, redirection words and arguments. Test and arithmetic
// clauses ([[ … ]], (( … )), let) are not stages, but the substitutions
// inside them are. A statement made only of redirections ("> file") and a
// compound statement with a file redirection ("{ a; } > f") are opaque
// stages of their own. A command with no stage at all (only comments or
// tests) is one opaque stage, so a request never has zero stages.
//
// # Prefix
//
// The prefix is the command word after quote removal ('ls', "ls" and \ls
// are ls), plus the first argument when that argument is a plain word not
// starting with "-": "git push origin" is [git push], "ls -la" is [ls],
// "ls /etc" is [ls /etc], "git -C repo status" is [git]. A plain word is
// literal text and '…' or "…" quotes holding literal text, nothing else.
//
// # Opaque stages
//
// A stage is opaque, and so no shell_prefix grant or read rule ever covers
// it (it reaches a decider, unless an interpreter's exact grant does), when
// (the reasons are the Opaque constants, checked in this order; the prefix
// is still filled when it can be computed):
//   - its command word is not a plain word: a parameter, command or
//     arithmetic expansion, a glob, a tilde, a brace, $'…' or $"…", or empty
//     ([OpaqueCommandWord]);
//   - its command runs another command taken from its arguments, by the
//     base name of the command word: env, sudo, doas, su, xargs, nohup,
//     nice, timeout, time, trap, similar wrappers (stdbuf, setsid, chroot,
//     strace, gdb, …), and subcommands that run one (uv run, npm exec,
//     docker exec, …) ([OpaqueRunner]);
//   - variables are assigned before the command word (PATH=/tmp x), or the
//     statement is only assignments ([OpaqueAssign]);
//   - its first argument is not a plain word: it could expand to anything,
//     so the prefix would lie ([OpaqueFirstArg]);
//   - any of its arguments holds an extended glob, *(…) or @(…): zsh runs
//     the code of a glob qualifier such as *(e:'rm -rf ~':) ([OpaqueExtGlob]);
//   - its command is an interpreter or evaluator (shells, eval, exec,
//     source, ".", command, builtin, python, node, perl, ruby, awk, …, by
//     path, in any case and with a version: /usr/bin/python3.12): no prefix
//     covers it, and only a grant of exactly its words does, which
//     [Stage.Argv] holds when every word is plain and its standard input is
//     no pipe, heredoc or herestring ([OpaqueInterpreter]);
//   - its command is a row of the command table (known: ls, cat, grep,
//     rg, fd, find, git, go, cargo, npm, make, pytest, jq, sed, tar, …),
//     and it is given an argument that runs code, a command, or writes a
//     file it names (find -exec, git -c, sed 's/x/y/e', tar --to-command,
//     ssh -o ProxyCommand or a remote command, make SHELL=…, go test
//     -exec, rg --pre, sort -o), or a word that could expand to one
//     ([OpaqueRunsCode]; GNU and git abbreviations included);
//   - its command is not a row of the table ([OpaqueNotInTable]), or its
//     row does not know one of its flags or subcommands
//     ([OpaqueUnknownArg]): the table fails closed, and as for an
//     interpreter only a grant of exactly its words covers it, which
//     [Stage.Argv] holds when every word is plain and its standard input
//     is no pipe, heredoc or herestring;
//   - it is inside a `…` command substitution, whose backslashes the shell
//     reads twice ([OpaqueBackquote]; $(…) has no such rule);
//   - it, or a statement around it, redirects to or from a file; fd
//     duplications (2>&1, >&2, >&-), /dev/null, heredocs and herestrings are
//     not files ([OpaqueRedirect]);
//   - the text is empty or blank, does not parse, has no simple command, or
//     is over MaxLen bytes: one opaque stage holding the whole text
//     ([OpaqueEmpty], [OpaqueUnparsable], [OpaqueNoCommand],
//     [OpaqueTooLong]).
//
// # Bounds
//
// Split does bounded work and never panics: a command over [MaxLen] bytes
// is not parsed, past [MaxStages] stages the rest of the text is one
// final opaque stage ([OpaqueTooMany]), and a statement nested deeper than
// [MaxDepth] is one opaque stage with all it holds ([OpaqueTooDeep]). Stage.Text is the source slice of
// the stage (without a trailing ";" or "&"), followed for each heredoc by a
// newline and the heredoc's body and closing delimiter as written.
package shell
