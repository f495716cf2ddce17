package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// plain is w's value after quote removal, and whether w is a plain word:
// only literal text and '…' or "…" quotes holding literal text. An
// expansion ($x, $(…), `…`, $((…)), <(…)), an unquoted glob (* ? [),
// brace ({), tilde (~) or extglob, and $'…' or $"…" quotes make it not plain.
// The word "[" alone (the test command) is plain.
func plain(w *syntax.Word) (string, bool) {
	if w.Lit() == "[" {
		return "[", true
	}
	var b strings.Builder
	for _, part := range w.Parts {
		s, ok := plainPart(part)
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return b.String(), true
}

func plainPart(part syntax.WordPart) (string, bool) {
	switch p := part.(type) {
	case *syntax.Lit:
		return unquoted(p.Value)
	case *syntax.SglQuoted:
		return p.Value, !p.Dollar
	case *syntax.DblQuoted:
		return doubleQuoted(p)
	}
	return "", false
}

// unquoted removes the backslashes of unquoted text, and refuses text with
// an unescaped glob, brace or tilde character.
func unquoted(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
		case strings.IndexByte("*?[{}~", c) >= 0:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

func doubleQuoted(q *syntax.DblQuoted) (string, bool) {
	if q.Dollar {
		return "", false
	}
	var b strings.Builder
	for _, part := range q.Parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			return "", false
		}
		b.WriteString(inDouble(lit.Value))
	}
	return b.String(), true
}

// inDouble removes the backslashes that escape $ ` " \ or a newline inside
// double quotes; other backslashes stay.
func inDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// oneWord: w always expands to exactly one word, whatever its expansions
// hold: it is quoted throughout ('…', "…" without "$@" or an array), so no
// field splitting or glob can turn it into several words or a flag
// countersign did not see.
func oneWord(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if !quotedOne(p) {
				return false
			}
		default:
			return false
		}
	}
	return len(w.Parts) > 0
}

// quotedOne: a double-quoted part holds only text, command and arithmetic
// substitutions, and plain parameters ("$x", "${x:0:3}"): never "$@",
// "${a[@]}", "${!p@}", "${!x}" or "${x:-"$@"}", which may expand to
// several words even in quotes.
func quotedOne(q *syntax.DblQuoted) bool {
	for _, part := range q.Parts {
		switch p := part.(type) {
		case *syntax.Lit, *syntax.CmdSubst, *syntax.ArithmExp:
		case *syntax.ParamExp:
			if p.Param == nil || p.Param.Value == "@" || p.Index != nil || p.Names != 0 || p.Excl ||
				p.Exp != nil || p.Repl != nil || p.NestedParam != nil {
				return false
			}
		default:
			return false
		}
	}
	return true
}
