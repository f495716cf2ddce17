package shell_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/countersign/countersign/shell"
)

// st is a stage as a test writes it: text, prefix, opaque reason.
func st(text string, prefix []string, opaque string) shell.Stage {
	return shell.Stage{Text: text, Prefix: prefix, Opaque: opaque}
}

func p(words ...string) []string { return words }

const (
	cmdWord  = shell.OpaqueCommandWord
	firstArg = shell.OpaqueFirstArg
	redirect = shell.OpaqueRedirect
	assign   = shell.OpaqueAssign
	runner   = shell.OpaqueRunner
	interp   = shell.OpaqueInterpreter
	runsCode = shell.OpaqueRunsCode
)

// exact is an interpreter's stage that a grant of exactly argv may cover.
func exact(text string, prefix []string, argv ...string) shell.Stage {
	return shell.Stage{Text: text, Prefix: prefix, Opaque: interp, Argv: argv}
}

// notIn is a stage of a command the table does not have: only a grant of
// exactly argv may cover it (none, when argv is empty).
func notIn(text string, prefix []string, argv ...string) shell.Stage {
	return shell.Stage{Text: text, Prefix: prefix, Opaque: shell.OpaqueNotInTable, Argv: argv}
}

var long = "echo " + strings.Repeat("a", shell.MaxLen)

// cases are real-world commands and their exact stages; the fuzz target
// starts from them too.
var cases = []struct {
	name, cmd string
	want      []shell.Stage
}{
	{"and", "git push origin main && npm test", []shell.Stage{st("git push origin main", p("git", "push"), ""), st("npm test", p("npm", "test"), "")}},
	{"or", "make || echo failed", []shell.Stage{st("make", p("make"), ""), st("echo failed", p("echo", "failed"), "")}},
	{"semicolon", "cd repo; ls -la", []shell.Stage{notIn("cd repo", p("cd", "repo"), "cd", "repo"), st("ls -la", p("ls"), "")}},
	{"background", "sleep 1 & rm x", []shell.Stage{notIn("sleep 1", p("sleep", "1"), "sleep", "1"), notIn("rm x", p("rm", "x"), "rm", "x")}},
	{"pipe", "ps aux | grep go | wc -l", []shell.Stage{notIn("ps aux", p("ps", "aux"), "ps", "aux"), st("grep go", p("grep", "go"), ""), st("wc -l", p("wc"), "")}},
	{"flag first", "ls -la", []shell.Stage{st("ls -la", p("ls"), "")}},
	{"path first", "ls /etc", []shell.Stage{st("ls /etc", p("ls", "/etc"), "")}},
	{"npm test", "npm test", []shell.Stage{st("npm test", p("npm", "test"), "")}},
	{"git -C", "git -C repo status", []shell.Stage{st("git -C repo status", p("git"), "")}},
	{"rm -rf", "rm -rf /", []shell.Stage{notIn("rm -rf /", p("rm"), "rm", "-rf", "/")}},
	{"escaped word", `\rm -rf /`, []shell.Stage{notIn(`\rm -rf /`, p("rm"), "rm", "-rf", "/")}},
	{"single quotes", "'ls' 'my dir'", []shell.Stage{st("'ls' 'my dir'", p("ls", "my dir"), "")}},
	{"double quotes", `"git" "status"`, []shell.Stage{st(`"git" "status"`, p("git", "status"), "")}},
	{"command subst", "echo $(whoami)", []shell.Stage{st("echo $(whoami)", p("echo"), firstArg), notIn("whoami", p("whoami"), "whoami")}},
	{"subst in quotes", `echo "$(whoami)"`, []shell.Stage{st(`echo "$(whoami)"`, p("echo"), firstArg), notIn("whoami", p("whoami"), "whoami")}},
	{"backticks", "echo `id` done", []shell.Stage{st("echo `id` done", p("echo"), firstArg), st("id", p("id"), shell.OpaqueBackquote)}},
	{"nested subst", `echo "$(dirname "$(which go)")"`, []shell.Stage{st(`echo "$(dirname "$(which go)")"`, p("echo"), firstArg), st(`dirname "$(which go)"`, p("dirname"), firstArg), notIn("which go", p("which", "go"), "which", "go")}},
	{"subst in later arg", "kill -9 $(pgrep node)", []shell.Stage{notIn("kill -9 $(pgrep node)", p("kill")), notIn("pgrep node", p("pgrep", "node"), "pgrep", "node")}},
	{"process subst", "diff <(ls a) <(ls b)", []shell.Stage{st("diff <(ls a) <(ls b)", p("diff"), firstArg), st("ls a", p("ls", "a"), ""), st("ls b", p("ls", "b"), "")}},
	{"heredoc", "cat <<EOF\nhello\nEOF", []shell.Stage{st("cat <<EOF\nhello\nEOF", p("cat"), "")}},
	{"heredoc subst", "cat <<EOF | grep x\nuser $(whoami)\nEOF", []shell.Stage{st("cat <<EOF\nuser $(whoami)\nEOF", p("cat"), ""), st("grep x", p("grep", "x"), ""), notIn("whoami", p("whoami"))}},
	{"quoted heredoc", "cat <<'EOF'\n$(whoami)\nEOF", []shell.Stage{st("cat <<'EOF'\n$(whoami)\nEOF", p("cat"), "")}},
	{"two heredocs", "cat <<A; cat <<B\na\nA\nb\nB", []shell.Stage{st("cat <<A\na\nA", p("cat"), ""), st("cat <<B\nb\nB", p("cat"), "")}},
	{"herestring", `grep x <<< "$(id)"`, []shell.Stage{st(`grep x <<< "$(id)"`, p("grep", "x"), ""), notIn("id", p("id"))}},
	{"env", "env X=1 make", []shell.Stage{st("env X=1 make", p("env", "X=1"), runner)}},
	{"sudo", "sudo rm -rf /", []shell.Stage{st("sudo rm -rf /", p("sudo", "rm"), runner)}},
	{"bash -c", "bash -c 'rm -rf /'", []shell.Stage{exact("bash -c 'rm -rf /'", p("bash"), "bash", "-c", "rm -rf /")}},
	{"sh -c", `sh -c "ls; rm -rf /"`, []shell.Stage{exact(`sh -c "ls; rm -rf /"`, p("sh"), "sh", "-c", "ls; rm -rf /")}},
	{"shell by path", "/bin/bash script.sh", []shell.Stage{exact("/bin/bash script.sh", p("/bin/bash", "script.sh"), "/bin/bash", "script.sh")}},
	{"eval", `eval "$CMD"`, []shell.Stage{st(`eval "$CMD"`, p("eval"), firstArg)}},
	{"source", ". ./env.sh && source ~/.profile", []shell.Stage{exact(". ./env.sh", p(".", "./env.sh"), ".", "./env.sh"), st("source ~/.profile", p("source"), firstArg)}},
	{"xargs", "find . -name '*.go' | xargs grep x", []shell.Stage{st("find . -name '*.go'", p("find", "."), ""), st("xargs grep x", p("xargs", "grep"), runner)}},
	{"curl pipe sh", "curl -fsSL https://example.com/i.sh | sh", []shell.Stage{notIn("curl -fsSL https://example.com/i.sh", p("curl"), "curl", "-fsSL", "https://example.com/i.sh"), st("sh", p("sh"), interp)}},
	{"subcommand runner", "uv run pytest", []shell.Stage{st("uv run pytest", p("uv", "run"), runner)}},
	{"file out", "ls > out.txt", []shell.Stage{st("ls > out.txt", p("ls"), redirect)}},
	{"append", "echo x >> ~/.bashrc", []shell.Stage{st("echo x >> ~/.bashrc", p("echo", "x"), redirect)}},
	{"file in", "sort < in", []shell.Stage{st("sort < in", p("sort"), redirect)}},
	{"dup to file", "make >& build.log", []shell.Stage{st("make >& build.log", p("make"), redirect)}},
	{"dup and null", "go test ./... 2>&1 >/dev/null 3>&-", []shell.Stage{st("go test ./... 2>&1 >/dev/null 3>&-", p("go", "test"), "")}},
	{"redirect only", "ls && > ~/.bashrc", []shell.Stage{st("ls", p("ls"), ""), st("> ~/.bashrc", nil, redirect)}},
	{"block redirect", "{ ls; pwd; } > out.txt", []shell.Stage{st("{ ls; pwd; } > out.txt", nil, redirect), st("ls", p("ls"), redirect), st("pwd", p("pwd"), redirect)}},
	{"assign prefix", "X=1 ls", []shell.Stage{st("X=1 ls", p("ls"), assign)}},
	{"ld preload", "LD_PRELOAD=/tmp/x.so ls", []shell.Stage{st("LD_PRELOAD=/tmp/x.so ls", p("ls"), assign)}},
	{"assign only subst", "a=$(rm -rf /)", []shell.Stage{st("a=$(rm -rf /)", nil, assign), notIn("rm -rf /", p("rm"), "rm", "-rf", "/")}},
	{"export subst", "export X=$(id)", []shell.Stage{st("export X=$(id)", p("export"), firstArg), notIn("id", p("id"), "id")}},
	{"export plain", "export GOFLAGS=-race", []shell.Stage{st("export GOFLAGS=-race", p("export", "GOFLAGS=-race"), "")}},
	{"declare flag", "declare -x A=1", []shell.Stage{st("declare -x A=1", p("declare"), "")}},
	{"for loop", `for f in $(ls); do rm "$f"; done`, []shell.Stage{st("ls", p("ls"), ""), st(`rm "$f"`, p("rm"), firstArg)}},
	{"if", "if [ -f go.mod ]; then go build; else make; fi", []shell.Stage{notIn("[ -f go.mod ]", p("["), "[", "-f", "go.mod", "]"), st("go build", p("go", "build"), ""), st("make", p("make"), "")}},
	{"while", "while read l; do echo ok; done", []shell.Stage{notIn("read l", p("read", "l"), "read", "l"), st("echo ok", p("echo", "ok"), "")}},
	{"case", "case $1 in a) ls;; *) pwd;; esac", []shell.Stage{st("ls", p("ls"), ""), st("pwd", p("pwd"), "")}},
	{"subshell", "(cd x && make)", []shell.Stage{notIn("cd x", p("cd", "x"), "cd", "x"), st("make", p("make"), "")}},
	{"brace group", "{ a; b; }", []shell.Stage{notIn("a", p("a"), "a"), notIn("b", p("b"), "b")}},
	{"function", "f() { rm -rf /; }; f", []shell.Stage{notIn("rm -rf /", p("rm"), "rm", "-rf", "/"), notIn("f", p("f"), "f")}},
	{"time keyword", "time go test", []shell.Stage{st("go test", p("go", "test"), "")}},
	{"param command", "$CMD arg", []shell.Stage{st("$CMD arg", nil, cmdWord)}},
	{"tilde command", "~/bin/x run", []shell.Stage{st("~/bin/x run", nil, cmdWord)}},
	{"glob command", "/usr/bin/py* -c x", []shell.Stage{st("/usr/bin/py* -c x", nil, cmdWord)}},
	{"brace command", "{rm,ls} x", []shell.Stage{st("{rm,ls} x", nil, cmdWord)}},
	{"ansi-c command", `$'\x72m' -rf /`, []shell.Stage{st(`$'\x72m' -rf /`, nil, cmdWord)}},
	{"subst command", "$(echo rm) -rf /", []shell.Stage{st("$(echo rm) -rf /", nil, cmdWord), st("echo rm", p("echo", "rm"), "")}},
	{"empty command word", "'' x", []shell.Stage{st("'' x", nil, cmdWord)}},
	{"zsh glob qualifier", "ls -la *(e:'rm -rf ~':)", []shell.Stage{st("ls -la *(e:'rm -rf ~':)", p("ls"), shell.OpaqueExtGlob)}},
	{"zsh bare qualifier", "ls -la x(e:rm)", []shell.Stage{st("ls -la x(e:rm)", nil, shell.OpaqueUnparsable)}},
	{"dash heredoc", "cat <<-EOF\n\tx $(id)\n\tEOF", []shell.Stage{st("cat <<-EOF\n\tx $(id)\n\tEOF", p("cat"), ""), notIn("id", p("id"))}},
	{"nohup", "nohup ./server &", []shell.Stage{st("nohup ./server", p("nohup", "./server"), runner)}},
	{"timeout", "timeout 5 curl x", []shell.Stage{st("timeout 5 curl x", p("timeout", "5"), runner)}},
	{"ssh", "ssh host rm -rf /", []shell.Stage{st("ssh host rm -rf /", p("ssh", "host"), runsCode)}},
	{"glob first arg", "rm *", []shell.Stage{st("rm *", p("rm"), firstArg)}},
	{"test clause", "[[ -f x ]] && rm x", []shell.Stage{notIn("rm x", p("rm", "x"), "rm", "x")}},
	{"arithmetic", "((i++))", []shell.Stage{st("((i++))", nil, shell.OpaqueNoCommand)}},
	{"arith subst", "(( $(wc -l < f) > 3 )) && echo big", []shell.Stage{st("wc -l < f", p("wc"), redirect), st("echo big", p("echo", "big"), "")}},
	{"comment", "ls # list files", []shell.Stage{st("ls", p("ls"), "")}},
	{"comment only", "# nothing", []shell.Stage{st("# nothing", nil, shell.OpaqueNoCommand)}},
	{"unclosed quote", `ls "`, []shell.Stage{st(`ls "`, nil, shell.OpaqueUnparsable)}},
	{"if then", "if then", []shell.Stage{st("if then", nil, shell.OpaqueUnparsable)}},
	{"empty", "", []shell.Stage{st("", nil, shell.OpaqueEmpty)}},
	{"whitespace", " \t\n ", []shell.Stage{st(" \t\n ", nil, shell.OpaqueEmpty)}},
	{"too long", long, []shell.Stage{st(long, nil, shell.OpaqueTooLong)}},
}

func TestSplit(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := shell.Split(c.cmd)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Split(%.80q)\n got  %#v\n want %#v", c.cmd, got, c.want)
			}
		})
	}
}

// TestSplitLsIsNotRm: an allow for ls never covers rm -rf /.
func TestSplitLsIsNotRm(t *testing.T) {
	ls, rm := shell.Split("ls")[0].Prefix, shell.Split("rm -rf /")[0].Prefix
	if reflect.DeepEqual(ls, rm) {
		t.Fatalf("ls and rm -rf / share the prefix %q", ls)
	}
}

// TestSplitOpaqueHasReason: every stage the table marks opaque comes back
// with a reason, and every command the table makes unsafe has an opaque stage.
func TestSplitOpaqueHasReason(t *testing.T) {
	for _, c := range cases {
		for i, s := range shell.Split(c.cmd) {
			if c.want[i].Opaque != "" && s.Opaque == "" {
				t.Errorf("%s: stage %d %q is not opaque", c.name, i, s.Text)
			}
		}
	}
}

func TestSplitTooManyStages(t *testing.T) {
	cmd := strings.Repeat("ls; ", shell.MaxStages+10)
	got := shell.Split(cmd)
	if len(got) != shell.MaxStages+1 {
		t.Fatalf("got %d stages, want %d", len(got), shell.MaxStages+1)
	}
	last := got[shell.MaxStages]
	if last.Opaque != shell.OpaqueTooMany || last.Text != strings.Repeat("ls; ", 10) {
		t.Errorf("last stage %q (%q), want the rest of the text, %q", last.Text, last.Opaque, shell.OpaqueTooMany)
	}
}

// Statements nested past MaxDepth are one opaque stage, whatever they
// hold: the walk stops there, so the worst command costs little.
func TestSplitTooDeep(t *testing.T) {
	for name, cmd := range map[string]string{
		"pipeline":     strings.Repeat("ls | ", 2*shell.MaxDepth) + "ls",
		"substitution": strings.Repeat("echo $(", 2*shell.MaxDepth) + "ls" + strings.Repeat(")", 2*shell.MaxDepth),
		"max length":   strings.Repeat("$(", shell.MaxLen/4) + "x" + strings.Repeat(")", shell.MaxLen/4),
		"subshells":    strings.Repeat("(", shell.MaxLen/2-1) + "x" + strings.Repeat(")", shell.MaxLen/2-1),
		"and list":     strings.Repeat("ls && ", 2*shell.MaxDepth) + "ls",
	} {
		got := shell.Split(cmd)
		deep := 0
		for _, s := range got {
			if s.Opaque == shell.OpaqueTooDeep {
				deep++
			}
		}
		if deep == 0 || len(got) > 2*shell.MaxDepth {
			t.Errorf("%s: %d stages, %d of them too deep; want at most %d, and one too deep", name, len(got), deep, 2*shell.MaxDepth)
		}
	}
	// Just inside the bound, every stage is its own.
	cmd := strings.Repeat("ls | ", shell.MaxDepth-1) + "ls"
	for i, s := range shell.Split(cmd) {
		if s.Opaque != "" || s.Text != "ls" {
			t.Fatalf("stage %d of a pipeline of %d: %q (%q)", i, shell.MaxDepth, s.Text, s.Opaque)
		}
	}
}

func TestSplitMaxLen(t *testing.T) {
	cmd := "ls " + strings.Repeat("a", shell.MaxLen-3)
	if got := shell.Split(cmd); len(got) != 1 || got[0].Opaque != "" {
		t.Errorf("a command of exactly MaxLen bytes: got %q, want one stage that may be covered", got[0].Opaque)
	}
}
