package shell

import (
	"bytes"

	"mvdan.cc/sh/v3/syntax"
)

// walker collects the stages of one parsed command.
type walker struct {
	src string
	out []found
}

// walk visits every statement under n, wherever it is nested: lists,
// pipelines, compound commands, function bodies, and command and process
// substitutions in words, heredoc bodies and assignments. inherited is the
// opaque reason of an enclosing statement's file redirection.
func (w *walker) walk(n syntax.Node, inherited string) {
	syntax.Walk(n, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if ok {
			w.stmt(st, inherited)
		}
		return !ok
	})
}

// stmt adds st's own stage, then walks what it holds; a file redirection
// on st makes every stage inside it opaque too.
func (w *walker) stmt(st *syntax.Stmt, inherited string) {
	redir := redirReason(st.Redirs)
	w.add(st, first(redir, inherited))
	inner := first(inherited, redir)
	if st.Cmd != nil {
		w.walk(st.Cmd, inner)
	}
	for _, r := range st.Redirs {
		w.walk(r, inner)
	}
}

// add records st as a stage when it is a simple command, a declaration, or
// any other statement with a file redirection or no command at all.
func (w *walker) add(st *syntax.Stmt, outer string) {
	var s Stage
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		s = callStage(c)
	case *syntax.DeclClause:
		s = declStage(c)
	case nil:
		s.Opaque = first(outer, OpaqueNoCommand)
	default:
		if outer == "" {
			return
		}
	}
	s.Opaque = first(s.Opaque, outer)
	s.Text = w.text(st)
	w.out = append(w.out, found{Stage: s, at: w.span(st)[0]})
}

// span is where st's command and redirections start and end, without a
// trailing ";" or "&" (heredoc bodies end at their body).
func (w *walker) span(st *syntax.Stmt) [2]uint {
	from, to := st.End().Offset(), st.Pos().Offset()
	if st.Cmd != nil {
		from, to = st.Cmd.Pos().Offset(), st.Cmd.End().Offset()
	}
	for _, r := range st.Redirs {
		from, to = min(from, r.Pos().Offset()), max(to, r.End().Offset())
	}
	return [2]uint{from, to}
}

// text is st's source as written; a statement with a heredoc is printed,
// so that its body and closing delimiter come with it.
func (w *walker) text(st *syntax.Stmt) string {
	sp := w.span(st)
	if hasHeredoc(st.Redirs) || sp[0] >= sp[1] || sp[1] > uint(len(w.src)) {
		return printed(st)
	}
	return w.src[sp[0]:sp[1]]
}

// printed is st without its ";", "&" or "!" as syntax.Printer writes it.
func printed(st *syntax.Stmt) string {
	var b bytes.Buffer
	bare := &syntax.Stmt{Cmd: st.Cmd, Redirs: st.Redirs, Position: st.Position}
	if err := syntax.NewPrinter().Print(&b, bare); err != nil || b.Len() == 0 {
		return "?"
	}
	return b.String()
}
