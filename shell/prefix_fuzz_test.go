package shell

import (
	"strings"
	"testing"
)

// FuzzPrefixCoverage: any stage a shell_prefix grant may cover has a
// command that is a row of the table, and only arguments its row knows.
// Each such stage's text is parsed again and its literal words read by the
// parser's own expander; then every flag is looked up in the row (and in
// its subcommand's row) apart from the scanner: a long flag by its name,
// a cluster letter by letter, a value skipped only when its flag takes
// one, and a row with subcommands must be given one it knows.
func FuzzPrefixCoverage(f *testing.F) {
	for _, c := range issue33 {
		f.Add(c.benign)
		f.Add(c.danger)
	}
	for _, name := range sortedKeys(rowCases) {
		c := rowCases[name]
		for _, cmd := range append(append(c.prefix, c.exact...), c.none...) {
			f.Add(cmd)
		}
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, s := range Split(cmd) {
			if s.Opaque != "" {
				continue
			}
			words, ok := stageWords(s.Text)
			if !ok || len(words) == 0 {
				continue // the text alone does not parse as one simple command
			}
			if words[0] == nil {
				t.Fatalf("Split(%q): stage %q may be covered, but its command word is not literal", cmd, s.Text)
			}
			name := commandName(*words[0])
			k, ok := known[rowName(*words[0])]
			if !ok || s.Argv != nil {
				t.Fatalf("Split(%q): stage %q may be covered by a shell_prefix grant, but %s is no row of the table", cmd, s.Text, name)
			}
			if bad := oracleUnknown(k, words[1:]); bad != "" {
				t.Fatalf("Split(%q): stage %q may be covered by a shell_prefix grant, but its row of %s does not know %q", cmd, s.Text, name, bad)
			}
		}
	})
}

// oracleUnknown is the first word of a row's arguments the row does not
// know ("" when it knows them all): a flag not in its safe set, an
// attached value on a flag that takes none, a subcommand not in its subs,
// or an expansion where a subcommand or a flag should be.
func oracleUnknown(k *knownCmd, words []*string) string {
	if k.custom != nil {
		return "" // git config: its own reader
	}
	if k.prep != nil { // tar's old-style first word is flags, as tar reads it
		words = prepWords(k, words)
	}
	operands := false
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == nil && k.subs != nil:
			return "<expansion>"
		case w == nil, operands, *w == "-", !strings.HasPrefix(*w, "-"):
			if k.subs == nil || operands && k.style != single {
				continue
			}
			sub, ok := k.subs[*w]
			if !ok {
				return *w
			}
			return oracleUnknown(sub, words[i+1:])
		case (*w == "--" && k.style != single) || (*w == "-args" && k.style == goflag):
			operands = true
		default:
			skip, bad := oracleFlag(k, *w)
			if bad != "" {
				return bad
			}
			i += skip
		}
	}
	return ""
}

// oracleFlag reads one flag word: how many words after it are its values,
// or the part the row does not know.
func oracleFlag(k *knownCmd, w string) (int, string) {
	if k.style == getopt && !strings.HasPrefix(w, "--") {
		for j := 1; j < len(w); j++ {
			kind, ok := k.safe["-"+w[j:j+1]]
			switch {
			case !ok:
				return 0, w
			case kind == oneValue && j+1 == len(w):
				return 1, ""
			case kind == oneValue || kind == optValue && j+1 < len(w):
				return 0, ""
			case kind == twoValue:
				return 0, w
			}
		}
		return 0, ""
	}
	name := w
	if k.style == goflag && strings.HasPrefix(w, "--") {
		name = w[1:]
	}
	name, _, attached := strings.Cut(name, "=")
	if k.style == single {
		name, attached = w, false
	}
	kind, ok := k.safe[name]
	switch {
	case !ok, attached && (kind == noValue || kind == twoValue):
		return 0, w
	case attached || kind == noValue || kind == optValue:
		return 0, ""
	case kind == twoValue:
		return 2, ""
	}
	return 1, ""
}

func prepWords(k *knownCmd, words []*string) []*string {
	args := make([]arg, len(words))
	for i, w := range words {
		if w != nil {
			args[i] = arg{*w, true, true}
		}
	}
	out := []*string{}
	for _, a := range k.prep(args) {
		if !a.ok {
			out = append(out, nil)
			continue
		}
		out = append(out, &a.text)
	}
	return out
}
