package shell

import (
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds on the work Split does for one command.
const (
	// MaxLen is the longest command Split parses; a longer one is one
	// opaque stage ([OpaqueTooLong]).
	MaxLen = 64 << 10
	// MaxStages is the most stages Split returns before one final opaque
	// stage ([OpaqueTooMany]) that holds the rest of the text.
	MaxStages = 256
	// MaxDepth is how deep statements may nest (each pipe, && or ||,
	// substitution or compound command is one level); a statement deeper
	// is one opaque stage ([OpaqueTooDeep]) holding its whole text. It
	// bounds the walk: without it, 64 KiB of "$(" took half a second.
	MaxDepth = 64
)

// Stage is one simple command of a shell command line (SPEC §8).
type Stage struct {
	Text   string   // the stage's source text as written (the source slice; each heredoc's body follows it)
	Prefix []string // the command word, plus the first argument when that argument is a plain word not starting with "-"
	Opaque string   // why the stage is never covered by a shell_prefix grant or a read rule; "" when it may be
	// Argv is the stage's words after quote removal, set only on a stage
	// whose prefix countersign cannot vouch for (Opaque is
	// OpaqueInterpreter, OpaqueNotInTable or OpaqueUnknownArg) whose words
	// are all plain, that has no other reason to be opaque, and whose
	// standard input is not a pipe, a heredoc or a herestring (it could
	// read its program there): only a grant whose shell_argv is exactly
	// these words covers it.
	Argv []string
}

// found is a stage and the offset where its text starts, for the source order.
type found struct {
	Stage
	at   uint
	stmt *syntax.Stmt
}

// Split parses command with a real shell parser (bash dialect) and returns
// its stages in source order. It never returns an empty slice: empty or
// unparsable text is one opaque stage holding the whole text. It never
// panics.
func Split(command string) (stages []Stage) {
	defer func() {
		if recover() != nil {
			stages = whole(command, OpaqueUnparsable)
		}
	}()
	switch {
	case len(command) > MaxLen:
		return whole(command, OpaqueTooLong)
	case strings.TrimSpace(command) == "":
		return whole(command, OpaqueEmpty)
	case parenDepth(command) > MaxDepth:
		// The parser recurses once per "(" (arithmetic, subshells,
		// substitutions): bound its work before it starts.
		return whole(command, OpaqueTooDeep)
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return whole(command, OpaqueUnparsable)
	}
	w := walker{src: command}
	w.walk(file, "")
	if len(w.out) == 0 {
		return whole(command, OpaqueNoCommand)
	}
	return w.stages()
}

// parenDepth is the deepest nesting of parentheses in s, quoted or not
// (an over-count only makes a command opaque).
func parenDepth(s string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
			deepest = max(deepest, depth)
		case ')':
			depth = max(0, depth-1)
		}
	}
	return deepest
}

// whole is the one opaque stage holding all of command.
func whole(command, reason string) []Stage {
	return []Stage{{Text: command, Opaque: reason}}
}

// stages orders what the walk found by where each stage starts and keeps at
// most MaxStages, then one opaque stage for the rest of the text.
func (w *walker) stages() []Stage {
	all := w.out
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	n := min(len(all), MaxStages)
	out := make([]Stage, 0, n+1)
	for _, f := range all[:n] {
		f.Text = w.text(f.stmt)
		out = append(out, f.Stage)
	}
	if len(all) > MaxStages {
		out = append(out, Stage{Text: w.src[all[MaxStages].at:], Opaque: OpaqueTooMany})
	}
	return out
}
