package shell

import "strings"

// A knownCmd is a command countersign knows whose arguments can run code,
// a command, or write a file they name (SPEC §8). Its flags are read as
// its own parser reads them; a flag it does not list as safe, an argument
// that could expand to a flag, or a value or operand its checks refuse
// makes the stage opaque ([OpaqueRunsCode]): it fails closed.
type knownCmd struct {
	// safe are the flags that run nothing; a flag ending in "=" takes a
	// value (--file=x, --file x, -fx, -f x).
	safe flagSet
	// runs are the flags that run code or a command or write a file they
	// name. They are never in safe; they are listed for the record and the
	// tests (each one is a test).
	runs []string
	// single: flags are whole words with one dash (find -name); otherwise
	// getopt: clusters of one-letter flags (-xzf) and --long[=value].
	single bool
	// value, if set, refuses a safe flag's value that runs code (ssh -o
	// ProxyCommand=…, sed -e 's/x/y/e').
	value func(flag, v string) bool
	// operands, if set, refuses operands that run code (a sed script, make
	// VAR=value, ssh's remote command); flags are the flags seen.
	operands func(ops []arg, flags []string) bool
	// prep, if set, rewrites the arguments before the scan (tar's
	// old-style first argument).
	prep func(args []arg) []arg
	// custom replaces the flag scanner (git).
	custom func(args []arg) bool
}

// flagSet maps a flag to whether it takes a value.
type flagSet map[string]bool

// flags reads "-a -b= --long --val=": "=" marks a flag that takes a value.
func flags(list string) flagSet {
	fs := flagSet{}
	for _, f := range strings.Fields(list) {
		name, val := strings.CutSuffix(f, "=")
		fs[name] = val
	}
	return fs
}

// runsCode reports whether the arguments of a stage of k (without the
// command word) run code, or could.
func (k *knownCmd) runsCode(args []arg) bool {
	if k.custom != nil {
		return k.custom(args)
	}
	if k.prep != nil {
		args = k.prep(args)
	}
	sc := scan{k: k}
	for sc.i = 0; sc.i < len(args) && !sc.bad; sc.i++ {
		sc.word(args)
	}
	if sc.bad {
		return true
	}
	return k.operands != nil && k.operands(sc.ops, sc.seen)
}

// scan is one pass over a known command's arguments.
type scan struct {
	k    *knownCmd
	i    int
	ops  []arg
	seen []string
	bad  bool
	rest bool // after "--": operands only
}

func (sc *scan) word(args []arg) {
	a := args[sc.i]
	switch {
	case sc.rest || a.text == "-" || (a.ok && !strings.HasPrefix(a.text, "-")):
		sc.bad = sc.bad || !a.one
		sc.ops = append(sc.ops, a)
	case !a.ok:
		sc.bad = true // it could expand to any flag
	case a.text == "--" && !sc.k.single:
		sc.rest = true
	case sc.k.single || strings.HasPrefix(a.text, "--"):
		sc.long(args, a.text)
	default:
		sc.cluster(args, a.text[1:])
	}
}

// long reads --name, --name=value, --name value (find: -name value).
func (sc *scan) long(args []arg, w string) {
	name, v, attached := strings.Cut(w, "=")
	if sc.k.single {
		name, attached = w, false
	}
	takes, ok := sc.k.safe[name]
	switch {
	case !ok || (attached && !takes):
		sc.bad = true
	case takes && attached:
		sc.take(name, arg{v, true, true})
	case takes:
		sc.takeNext(args, name)
	default:
		sc.seen = append(sc.seen, name)
	}
}

// cluster reads one-letter flags -abc, where a flag that takes a value
// takes the rest of the word, or the next word.
func (sc *scan) cluster(args []arg, letters string) {
	for j := 0; j < len(letters); j++ {
		name := "-" + letters[j:j+1]
		takes, ok := sc.k.safe[name]
		switch {
		case !ok:
			sc.bad = true
			return
		case takes && j+1 < len(letters):
			sc.take(name, arg{letters[j+1:], true, true})
			return
		case takes:
			sc.takeNext(args, name)
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
		sc.bad = true
	case !v.ok:
	case riskyWord(sc.k.runs, sc.k.single, v.text), sc.k.safe[v.text], sc.k.value != nil && sc.k.value(name, v.text):
		sc.bad = true // a value that is itself a flag taking a value (ssh -B -o ProxyCommand=…) is refused too
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
