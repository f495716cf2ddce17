package shell

import (
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// FuzzStageCoverage: no input produces a stage a grant may cover whose
// words hold a runner argument of the table. Each stage's text is parsed
// again and its literal words read by the parser's own expander, apart
// from the classifier: a stage a shell_prefix grant may cover is no
// interpreter or wrapper and, for a command of the table, holds none of
// its runs flags (nor a sed script with e, w or W); a stage an exact grant
// may cover has an Argv that is exactly its words, and holds none of the
// runs flags of its row either.
func FuzzStageCoverage(f *testing.F) {
	for _, c := range findings {
		f.Add(c.benign)
		f.Add(c.danger)
	}
	for _, seed := range []string{
		"find . -name -exec", "git -C -c x=y status", "tar xIf prog a", "tar cf --to-command=x a",
		"rsync -avze ssh a b", "ssh -oProxyCommand=x h", "ssh -l -o ProxyCommand=x h", "make -C SHELL=x",
		"sed -n -e '$!W f' x", "sed -- '1e id' f", "git rebase --exe=x main", "curl x | python3",
		"python3 <<EOF\nx\nEOF", `env LD_PRELOAD=/tmp/evil.so ls`, "'python3' -c x", `p\ython3 -c x`,
		"git config --get x --add y", "sed 's/a/b/;e' f", "/usr/bin/python3.12 -c x", "AWK 'BEGIN{}'",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, s := range Split(cmd) {
			checkCoverage(t, cmd, s)
		}
	})
}

func checkCoverage(t *testing.T, cmd string, s Stage) {
	if !grantable(s) {
		return
	}
	words, ok := stageWords(s.Text)
	if !ok || len(words) == 0 {
		return // the text alone does not parse as one simple command
	}
	if words[0] == nil {
		t.Fatalf("Split(%q): stage %q may be covered, but its command word is not literal", cmd, s.Text)
	}
	name := commandName(*words[0])
	if s.Argv != nil {
		if interpreters[name] != (s.Opaque == OpaqueInterpreter) || !interpreters[name] && !exactOnly(s.Opaque) ||
			runners[name] || !sameWords(words, s.Argv) {
			t.Fatalf("Split(%q): stage %q has argv %q (%q), its words are %q", cmd, s.Text, s.Argv, s.Opaque, show(words))
		}
		if k, ok := known[rowName(*words[0])]; ok && oracleRuns(rowName(*words[0]), k, words[1:]) {
			t.Fatalf("Split(%q): an exact grant may cover stage %q, but it holds a runs argument of %s", cmd, s.Text, name)
		}
		return
	}
	if interpreters[name] || runners[name] {
		t.Fatalf("Split(%q): stage %q of %s may be covered by a shell_prefix grant", cmd, s.Text, name)
	}
	if k, ok := known[rowName(*words[0])]; ok && oracleRuns(rowName(*words[0]), k, words[1:]) {
		t.Fatalf("Split(%q): stage %q may be covered, but holds a runs argument of %s: %q", cmd, s.Text, name, show(words))
	}
}

// stageWords parses a stage's text as its own command and returns its
// words as the shell would see them after quote removal, nil for a word
// with an expansion, a glob, a brace or a tilde.
func stageWords(text string) ([]*string, bool) {
	// A backslash-newline is a line continuation, which the shell removes
	// at the end of its input too; the parser keeps it there as a literal.
	if body, ok := strings.CutSuffix(text, "\\\n"); ok && (len(body)-len(strings.TrimRight(body, "\\")))%2 == 0 {
		text = body
	}
	// Inside a word, the oracle's own expansion (expand.Fields) keeps a
	// backslash-newline as a newline where the shell removes it (`\\\<nl>0`
	// is `\0` to bash): the oracle does not judge such text.
	if strings.Contains(text, "\\\n") {
		return nil, false
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil || len(file.Stmts) != 1 {
		return nil, false
	}
	call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return nil, false
	}
	out := make([]*string, len(call.Args))
	for i, w := range call.Args {
		if !literalWord(w) {
			continue
		}
		if v, err := expand.Fields(nil, w); err == nil && len(v) == 1 {
			out[i] = &v[0]
		}
	}
	return out, true
}

func literalWord(w *syntax.Word) bool {
	if w.Lit() == "[" {
		return true
	}
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if unescapedGlob(p.Value) {
				return false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			for _, in := range p.Parts {
				if _, ok := in.(*syntax.Lit); !ok || p.Dollar {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// unescapedGlob: s holds a glob, brace or tilde character without a
// backslash before it.
func unescapedGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case strings.IndexByte("*?[{}~", s[i]) >= 0:
			return true
		}
	}
	return false
}

func sameWords(words []*string, argv []string) bool {
	got := make([]string, len(words))
	for i, w := range words {
		if w == nil {
			return false
		}
		got[i] = *w
	}
	return slices.Equal(got, argv)
}

func show(words []*string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = "<expansion>"
		if w != nil {
			out[i] = *w
		}
	}
	return out
}

// oracleRuns: some literal word of a known command's arguments is one of
// its runs flags, written as its parser would take it, before "--".
func oracleRuns(name string, k *knownCmd, words []*string) bool {
	if name == "git" {
		return oracleGit(words)
	}
	for i, w := range words {
		switch {
		case w == nil:
		case *w == "--" && !(k.style == single):
			return false
		case oracleHitAny(k.runs, *w, (k.style == single)):
			return true
		case i > 0 && words[i-1] != nil && *words[i-1] == "-o" && oracleHitAny(k.runs, "-o"+*w, false):
			return true
		case i > 0 && words[i-1] != nil && *words[i-1] == "-e" && (name == "sed" || name == "gsed") && oracleSed(*w):
			return true
		case strings.HasPrefix(*w, "--expression=") && oracleSed(strings.TrimPrefix(*w, "--expression=")):
			return true
		}
	}
	return false
}

func oracleHitAny(runs []string, w string, single bool) bool {
	for _, r := range runs {
		if oracleHit(r, w, single) {
			return true
		}
	}
	return false
}

func oracleHit(r, w string, single bool) bool {
	if flag, key, ok := strings.Cut(r, " "); ok {
		// The flag is case-sensitive (ssh -O is not -o); its option's
		// keyword is not.
		return strings.HasPrefix(w, flag) && strings.HasPrefix(strings.ToLower(w[len(flag):]), strings.ToLower(key))
	}
	if single {
		return w == r
	}
	return w == r || strings.HasPrefix(w, r+"=") || (strings.HasSuffix(r, "=") && strings.HasPrefix(w, r)) ||
		(len(r) == 2 && strings.HasPrefix(w, r))
}

// oracleSed: a script that starts with an e, w or W command, or whose
// first command is an s with the e or w flag.
func oracleSed(script string) bool {
	s := strings.TrimLeft(script, " \t\n;")
	s = strings.TrimLeft(s, "0123456789$")
	s = strings.TrimLeft(s, " \t!")
	if s != "" && strings.IndexByte("ewW", s[0]) >= 0 {
		return true
	}
	if len(s) < 2 || s[0] != 's' || strings.ContainsAny(s, `\`) {
		return false
	}
	parts := strings.Split(s[2:], s[1:2])
	if len(parts) < 3 {
		return false
	}
	flags := strings.TrimLeft(parts[2], "gpiImM0123456789")
	return flags != "" && (flags[0] == 'e' || flags[0] == 'w')
}

// oracleGit: a global option of gitGlobalRuns (also as the value of -C and
// the like), or a runs flag of the subcommand before "--".
func oracleGit(words []*string) bool {
	i := 0
	for ; i < len(words); i++ {
		w := words[i]
		if w == nil || !strings.HasPrefix(*w, "-") {
			break
		}
		if oracleHitAny(gitGlobalRuns, *w, false) {
			return true
		}
		if *w == "-C" || *w == "--git-dir" || *w == "--work-tree" || *w == "--namespace" {
			i++
			if i < len(words) && words[i] != nil && oracleHitAny(gitGlobalRuns, *words[i], false) {
				return true
			}
		}
	}
	if i >= len(words) || words[i] == nil {
		return false
	}
	for _, w := range words[i+1:] {
		if w == nil {
			continue
		}
		if *w == "--" {
			return false
		}
		for _, r := range gitSubRuns[*words[i]] {
			if *w == r || strings.HasPrefix(*w, r+"=") || (len(r) == 2 && strings.HasPrefix(*w, r)) {
				return true
			}
		}
	}
	return false
}
