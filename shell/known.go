package shell

import "strings"

// A knownCmd is a row of the command table (SPEC §8, "Prefix grants only
// where countersign reads the command"): a command whose arguments
// countersign reads as its own parser reads them, with the flags (and
// subcommands) it knows run no code. A stage of it is covered by a prefix
// grant only when every argument is one the row knows; a flag or
// subcommand it does not know leaves only an exact grant; an argument
// that runs code, a command, or writes a file it names, or one that could
// expand to such an argument, leaves none.
type knownCmd struct {
	// safe are the flags that run nothing; see flags for how a flag that
	// takes a value is written.
	safe flagSet
	// runs are the flags that run code or a command or write a file they
	// name. They are never in safe; a word that is, or could be read as,
	// one of them (an abbreviation, a cluster holding it) makes the stage
	// one no grant covers. Each is a test.
	runs []string
	// style is how the command's parser reads flags.
	style flagStyle
	// value, if set, says what a safe flag's value is (ssh -o
	// ProxyCommand=… runs; go build -o /usr/bin/x is not known).
	value func(flag, v string) verdict
	// operands, if set, says what the operands are (a sed script, make
	// VAR=value, ssh's remote command); seen are the flags seen.
	operands func(ops []arg, seen []string) verdict
	// prep, if set, rewrites the arguments before the scan (tar's
	// old-style first argument).
	prep func(args []arg) []arg
	// subs, if set, are the subcommands the row knows: the first operand
	// must be one of them, and its row reads the words after it.
	subs map[string]*knownCmd
	// custom replaces the scanner (git config).
	custom func(args []arg) verdict
}

// A verdict is what a row says of a stage's arguments; a larger one wins.
type verdict uint8

const (
	// knows: every argument is one the row knows; a prefix grant may
	// cover the stage.
	knows verdict = iota
	// unknown: a flag, subcommand or operand the row does not know; only a
	// grant of the stage's exact words covers it.
	unknown
	// runs: an argument runs code or a command, writes a file it names, or
	// could expand to such an argument; no grant covers the stage.
	runs
)

// flagStyle is how a command's parser reads its flags.
type flagStyle uint8

const (
	// getopt: clusters of one-letter flags (-xzf) and --long[=value].
	getopt flagStyle = iota
	// single: whole words with one dash, the value the next word (find).
	single
	// goflag: Go's flag package: -name, --name, -name=value or -name value,
	// no clusters.
	goflag
)

// flagKind is what a flag takes.
type flagKind uint8

const (
	noValue  flagKind = iota + 1
	oneValue          // --file=x, --file x, -fx, -f x
	optValue          // only attached: --color, --color=auto, -uno
	twoValue          // two words: jq --arg name value
)

// flagSet maps a flag to what it takes.
type flagSet map[string]flagKind

// flags reads "-a -b= --opt? --two==": "=" marks a flag that takes a
// value, "?" one whose value is optional and only attached, "==" one that
// takes two words.
func flags(list string) flagSet {
	fs := flagSet{}
	for _, f := range strings.Fields(list) {
		switch {
		case strings.HasSuffix(f, "=="):
			fs[f[:len(f)-2]] = twoValue
		case strings.HasSuffix(f, "="):
			fs[f[:len(f)-1]] = oneValue
		case strings.HasSuffix(f, "?"):
			fs[f[:len(f)-1]] = optValue
		default:
			fs[f] = noValue
		}
	}
	return fs
}

// plus is fs with the flags of list added.
func (fs flagSet) plus(list string) flagSet {
	out := flags(list)
	for f, k := range fs {
		out[f] = k
	}
	return out
}

// digits are -0 … -9, as head -20, grep -3 and git log -5 take them.
const digits = "-0 -1 -2 -3 -4 -5 -6 -7 -8 -9"

// judge says what the arguments of a stage of k (without the command
// word) are.
func (k *knownCmd) judge(args []arg) verdict {
	if k.custom != nil {
		return k.custom(args)
	}
	if k.prep != nil {
		args = k.prep(args)
	}
	sc := scan{k: k}
	for sc.i = 0; sc.i < len(args) && sc.v != runs && !sc.lost && sc.sub == nil; sc.i++ {
		sc.word(args)
	}
	switch {
	case sc.v == runs:
		return runs
	case sc.lost:
		return max(unknown, k.after(args[sc.i:]))
	case sc.sub != nil:
		return max(sc.v, sc.sub.judge(args[sc.i:]))
	case k.operands != nil:
		return max(sc.v, k.operands(sc.ops, sc.seen))
	}
	return sc.v
}

// after reads the words that follow one the row does not know, when it
// cannot tell flags from values any more: any word that is or could be a
// runs flag (or is not plain) is taken for one, and a row that reads
// values or operands takes every word for one.
func (k *knownCmd) after(rest []arg) verdict {
	if k.value != nil || k.operands != nil {
		return runs
	}
	for _, a := range rest {
		if !a.ok || mayRun(k.runs, k.style, a.text) {
			return runs
		}
	}
	return knows
}

// mayRun: w is one of runs, or could be read as one: with a value
// attached, an abbreviation of a long one (GNU and git take any
// unambiguous one), or a cluster holding a short one.
func mayRun(rs []string, style flagStyle, w string) bool {
	if riskyWord(rs, style != getopt, w) {
		return true
	}
	if style != getopt && strings.HasPrefix(w, "--") {
		return riskyWord(rs, true, w[1:])
	}
	if style != getopt {
		return false
	}
	for _, r := range rs {
		if strings.HasPrefix(r, "-") && !strings.Contains(r, " ") && gitFlagIs(w, r) {
			return true
		}
	}
	return false
}

// scan is one pass over a known command's arguments.
type scan struct {
	k    *knownCmd
	i    int
	ops  []arg
	seen []string
	v    verdict
	rest bool      // after "--": operands only
	lost bool      // a flag or subcommand the row does not know: what follows is unread
	sub  *knownCmd // the subcommand's row, once read
}

func (sc *scan) fail(v verdict) { sc.v = max(sc.v, v) }

func (sc *scan) word(args []arg) {
	a := args[sc.i]
	switch {
	case sc.rest || a.text == "-" || (a.ok && !strings.HasPrefix(a.text, "-")):
		sc.operand(a)
	case !a.ok:
		sc.fail(runs) // it could expand to any flag
	case a.text == "--" && sc.k.style != single, a.text == "-args" && sc.k.style == goflag:
		sc.rest = true
	case sc.k.style == goflag && strings.HasPrefix(a.text, "--"):
		sc.long(args, a.text[1:])
	case sc.k.style != getopt || strings.HasPrefix(a.text, "--"):
		sc.long(args, a.text)
	default:
		sc.cluster(args, a.text[1:])
	}
}

// operand records an operand; the first one of a row with subcommands
// names the subcommand.
func (sc *scan) operand(a arg) {
	switch {
	case !a.one:
		sc.fail(runs) // it could split into flags
	case sc.k.subs == nil || sc.rest:
		sc.ops = append(sc.ops, a)
	case !a.ok || sc.k.subs[a.text] == nil:
		sc.fail(unknown)
		sc.lost = true // what follows it is read by after
	default:
		sc.sub = sc.k.subs[a.text]
	}
}

// long reads --name, --name=value, --name value (find: -name value).
func (sc *scan) long(args []arg, w string) {
	name, v, attached := strings.Cut(w, "=")
	if sc.k.style == single {
		name, attached = w, false
	}
	kind, ok := sc.k.safe[name]
	switch {
	case !ok:
		sc.unknownFlag(w)
	case attached && (kind == noValue || kind == twoValue):
		sc.unknownFlag(w)
	case attached:
		sc.take(name, arg{v, true, true})
	case kind == oneValue:
		sc.takeNext(args, name)
	case kind == twoValue:
		sc.takeNext(args, name)
		sc.takeNext(args, name)
	default:
		sc.seen = append(sc.seen, name)
	}
}

// unknownFlag: w is no flag the row knows; it runs when it could be one
// of the row's runs flags.
func (sc *scan) unknownFlag(w string) {
	if mayRun(sc.k.runs, sc.k.style, w) {
		sc.fail(runs)
		return
	}
	sc.fail(unknown)
	sc.lost = true
}

// cluster reads one-letter flags -abc, where a flag that takes a value
// takes the rest of the word, or the next word.
func (sc *scan) cluster(args []arg, letters string) {
	for j := 0; j < len(letters); j++ {
		name := "-" + letters[j:j+1]
		kind, ok := sc.k.safe[name]
		switch {
		case !ok:
			sc.unknownFlag("-" + letters[j:])
			return
		case (kind == oneValue || kind == optValue) && j+1 < len(letters):
			sc.take(name, arg{letters[j+1:], true, true})
			return
		case kind == oneValue:
			sc.takeNext(args, name)
			return
		case kind == twoValue:
			sc.unknownFlag("-" + letters[j:])
			return
		}
		sc.seen = append(sc.seen, name)
	}
}

func (sc *scan) takeNext(args []arg, name string) {
	if sc.i+1 >= len(args) {
		sc.seen = append(sc.seen, name)
		return
	}
	sc.i++
	sc.take(name, args[sc.i])
}

// take records a flag's value: one that is not sure to stay one word, one
// a value check cannot read, one that is itself a flag that runs code, or
// one that is a flag taking a value, is refused.
func (sc *scan) take(name string, v arg) {
	sc.seen = append(sc.seen, name)
	switch {
	case !v.one, !v.ok && sc.k.value != nil:
		sc.fail(runs)
	case !v.ok:
	case riskyWord(sc.k.runs, sc.k.style != getopt, v.text), sc.k.safe[v.text] == oneValue:
		sc.fail(runs) // a value that is itself a flag taking a value (ssh -B -o ProxyCommand=…) is refused too
	case sc.k.value != nil:
		sc.fail(sc.k.value(name, v.text))
	}
}

// riskyWord: w is one of the flags runs, as a word its parser would take
// for it (-exec; --to-command or --to-command=…; -I or -Iprog; SHELL=…;
// ssh's "-o ProxyCommand" as -oProxyCommand=…, any case).
func riskyWord(runs []string, single bool, w string) bool {
	for _, r := range runs {
		flag, key, option := strings.Cut(r, " ")
		switch {
		case option && strings.HasPrefix(strings.ToLower(w), flag+strings.ToLower(key)):
			return true
		case option:
		case w == r, strings.HasPrefix(w, r+"="), strings.HasSuffix(r, "=") && strings.HasPrefix(w, r):
			return true
		case !single && len(r) == 2 && strings.HasPrefix(w, r):
			return true
		}
	}
	return false
}

// runsIf is a value check: runs when bad says so.
func runsIf(bad func(flag, v string) bool) func(flag, v string) verdict {
	return func(flag, v string) verdict {
		if bad(flag, v) {
			return runs
		}
		return knows
	}
}

// localPath is a value check for a flag that writes the file it names
// (go build -o, --coverprofile): a relative path that does not climb out
// of the working directory is data; any other is known only by its exact
// grant.
func localPath(writes ...string) func(flag, v string) verdict {
	return func(flag, v string) verdict {
		for _, w := range writes {
			if flag == w && !isLocalPath(v) {
				return unknown
			}
		}
		return knows
	}
}

func isLocalPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.Contains(p, `\`) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}
