package shell

import "strings"

// sedRuns reports whether a sed script may run a command or write a file:
// the e, w or W commands, the e or w flags of s, or anything it cannot
// read as GNU sed would (an unknown command, an unterminated s or y).
func sedRuns(script string) bool {
	p := sedParser{s: script}
	for !p.done() {
		if p.command() {
			return true
		}
	}
	return false
}

// sedParser reads a sed script command by command.
type sedParser struct {
	s string
	i int
}

func (p *sedParser) done() bool {
	p.skip(" \t\n;")
	return p.i >= len(p.s)
}

func (p *sedParser) skip(chars string) {
	for p.i < len(p.s) && strings.IndexByte(chars, p.s[p.i]) >= 0 {
		p.i++
	}
}

// command reads one command, its address first; true: it may run code.
func (p *sedParser) command() bool {
	if !p.address() {
		return true
	}
	p.skip(" \t!")
	if p.i >= len(p.s) {
		return true
	}
	c := p.s[p.i]
	p.i++
	switch {
	case c == '{':
		return false
	case strings.IndexByte("}=dDgGhHnNpPxzF", c) >= 0:
	case strings.IndexByte("lLqQ", c) >= 0:
		p.skip(" \t0123456789")
	case strings.IndexByte("aic", c) >= 0:
		p.text()
		return false
	case strings.IndexByte(":btTv", c) >= 0:
		p.upTo(";\n")
	case c == 'r' || c == 'R': // reads a file
		p.upTo("\n")
	case c == '#':
		p.upTo("\n")
		return false
	case c == 's':
		return !p.delimited(2) || p.sFlags()
	case c == 'y':
		return !p.delimited(2)
	default: // e, w, W, and what sed would refuse
		return true
	}
	return !p.end()
}

// address skips an address or a range of two: a line number, first~step,
// $, /regex/ or \cregexc with its I and M flags, +N and ~N.
func (p *sedParser) address() bool {
	for n := 0; n < 2; n++ {
		p.skip(" \t")
		if !p.oneAddress() {
			return false
		}
		p.skip(" \t")
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return true
		}
		p.i++
	}
	return true
}

func (p *sedParser) oneAddress() bool {
	if p.i >= len(p.s) {
		return true
	}
	switch c := p.s[p.i]; {
	case c == '/':
		p.i++
		return p.until('/') && p.regexFlags()
	case c == '\\':
		if p.i+1 >= len(p.s) || p.s[p.i+1] == '\n' {
			return false
		}
		d := p.s[p.i+1]
		p.i += 2
		return p.until(d) && p.regexFlags()
	}
	p.skip("0123456789$~+")
	return true
}

func (p *sedParser) regexFlags() bool {
	p.skip("IM")
	return true
}

// delimited reads n parts ended by the delimiter that comes first (s/a/b/,
// y|a|b|); a backslash escapes the next byte.
func (p *sedParser) delimited(n int) bool {
	if p.i >= len(p.s) || p.s[p.i] == '\\' || p.s[p.i] == '\n' {
		return false
	}
	d := p.s[p.i]
	p.i++
	for range n {
		if !p.until(d) {
			return false
		}
	}
	return true
}

// until moves past the next unescaped d; false at the end of the script.
func (p *sedParser) until(d byte) bool {
	for ; p.i < len(p.s); p.i++ {
		switch p.s[p.i] {
		case '\\':
			p.i++
		case d:
			p.i++
			return true
		}
	}
	return false
}

// sFlags reads the flags of s; true: e or w (or one sed would refuse).
func (p *sedParser) sFlags() bool {
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		switch {
		case strings.IndexByte("gpiImM0123456789", c) >= 0:
		case c == 'e' || c == 'w':
			return true
		default:
			return !p.end()
		}
	}
	return false
}

// end: the command ends here (blanks, then ;, a newline, }, # or the end).
func (p *sedParser) end() bool {
	p.skip(" \t")
	return p.i >= len(p.s) || strings.IndexByte(";\n}#", p.s[p.i]) >= 0
}

func (p *sedParser) upTo(stops string) {
	for p.i < len(p.s) && strings.IndexByte(stops, p.s[p.i]) < 0 {
		p.i++
	}
}

// text skips the text of a, i and c: to the end of the line, and on past
// each line that ends with a backslash.
func (p *sedParser) text() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '\n':
			p.i++
			return
		}
		p.i++
	}
}
