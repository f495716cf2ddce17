package shell

import "mvdan.cc/sh/v3/syntax"

// walker collects the stages of one parsed command.
type walker struct {
	src   string
	out   []found
	depth int // statements enclosing the one being walked
	// fed counts the statements enclosing the one being walked whose
	// standard input is a pipe, a heredoc or a herestring: an interpreter
	// in them could read its program there, so no exact grant covers it.
	fed int
	// backq counts the `…` substitutions enclosing the statement being
	// walked: their backslashes are read twice, so the words a stage's
	// quote removal finds there are not sure to be the words that run, and
	// no grant covers it (OpaqueBackquote).
	backq int
	piped map[*syntax.Stmt]bool // the right side of each pipe seen
}

// walk visits every statement under n, wherever it is nested: lists,
// pipelines, compound commands, function bodies, and command and process
// substitutions in words, heredoc bodies and assignments. inherited is the
// opaque reason of an enclosing statement's file redirection.
func (w *walker) walk(n syntax.Node, inherited string) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if cs, ok := n.(*syntax.CmdSubst); ok && cs.Backquotes {
			w.backq++
			for _, st := range cs.Stmts {
				w.stmt(st, inherited)
			}
			w.backq--
			return false
		}
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
	if w.depth >= MaxDepth {
		w.out = append(w.out, found{Stage: Stage{Opaque: OpaqueTooDeep}, at: span(st)[0], stmt: st})
		return
	}
	w.depth++
	defer func() { w.depth-- }()
	if w.piped[st] || feedsStdin(st.Redirs) {
		w.fed++
		defer func() { w.fed-- }()
	}
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		if w.piped == nil {
			w.piped = map[*syntax.Stmt]bool{}
		}
		w.piped[b.Y] = true
	}
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
	if outer != "" || w.fed > 0 || w.backq > 0 {
		s.Argv = nil
	}
	if w.backq > 0 && (s.Opaque == "" || s.Argv == nil && exactOnly(s.Opaque)) {
		s.Opaque = OpaqueBackquote
	}
	s.Opaque = first(s.Opaque, outer)
	w.out = append(w.out, found{Stage: s, at: span(st)[0], stmt: st})
}

// feedsStdin: a redirection gives the statement its standard input.
func feedsStdin(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			return true
		}
	}
	return false
}

// span is where st's command and redirections start and end, without a
// trailing ";" or "&", and without heredoc bodies.
func span(st *syntax.Stmt) [2]uint {
	from, to := st.End().Offset(), st.Pos().Offset()
	if st.Cmd != nil {
		from, to = st.Cmd.Pos().Offset(), st.Cmd.End().Offset()
	}
	for _, r := range st.Redirs {
		end := r.End()
		if r.Hdoc != nil {
			end = r.Word.End()
		}
		from, to = min(from, r.Pos().Offset()), max(to, end.Offset())
	}
	return [2]uint{from, to}
}

// text is st's source as written, followed by the body and the closing
// delimiter of each of its heredocs. It is made only for the stages kept,
// so its copying is bounded by MaxStages × MaxLen. Should the parser ever
// give positions outside the text, the stage's text is the whole command.
func (w *walker) text(st *syntax.Stmt) string {
	sp := span(st)
	if sp[0] >= sp[1] || sp[1] > uint(len(w.src)) {
		return w.src
	}
	text := w.src[sp[0]:sp[1]]
	for _, r := range st.Redirs {
		if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc {
			text += "\n" + w.heredoc(r)
		}
	}
	return text
}

// heredoc is the body of r as written, which ends with its closing
// delimiter line; an empty body is just the delimiter.
func (w *walker) heredoc(r *syntax.Redirect) string {
	if r.Hdoc == nil {
		delim, _ := plain(r.Word)
		return delim
	}
	from, to := r.Hdoc.Pos().Offset(), r.Hdoc.End().Offset()
	return w.src[from:min(to, uint(len(w.src)))]
}
