package jcs

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"
)

// Errors from strict JSON parsing.
var (
	ErrDuplicateKey = errors.New("jcs: duplicate object key")
	ErrInvalidUTF8  = errors.New("jcs: invalid UTF-8")
	ErrNumber       = errors.New("jcs: number does not round-trip through an IEEE double")
	ErrSurrogate    = errors.New("jcs: lone surrogate escape (RFC 8785 and I-JSON forbid it)")
	ErrSyntax       = errors.New("jcs: malformed JSON")
	ErrDepth        = errors.New("jcs: JSON nested deeper than 10000 levels")
)

// maxDepth is the deepest nesting Canonicalize accepts: encoding/json's
// limit, so that what canonicalizes also decodes.
const maxDepth = 10000

// Canonicalize returns the RFC 8785 (JCS) canonical form of the JSON text
// raw, in one pass over it. It refuses duplicate keys after unescaping,
// invalid UTF-8, and numbers that an IEEE double cannot hold exactly as
// written (ErrDuplicateKey, ErrInvalidUTF8, ErrNumber), lone surrogate
// escapes such as "\ud800" (ErrSurrogate), nesting deeper than 10000
// (ErrDepth), and any other malformed JSON, trailing data included
// (ErrSyntax).
//
// When raw has several faults the error is the one the rules meet first in
// this order: invalid UTF-8, then a lone surrogate escape anywhere, then
// whatever comes first in the text.
func Canonicalize(raw []byte) ([]byte, error) {
	return Append(make([]byte, 0, len(raw)+16), raw)
}

// Append appends the canonical form of raw to dst, with the errors of
// Canonicalize; on error it returns nil.
func Append(dst, raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) {
		return nil, ErrInvalidUTF8
	}
	p := parsers.Get().(*parser)
	defer p.release()
	p.reset(raw, dst)
	if err := p.document(); err != nil {
		return nil, firstFault(raw, err)
	}
	return p.out, nil
}

// firstFault reports a lone surrogate escape anywhere in raw before any
// other fault but invalid UTF-8, as the canonicalizer this one replaced did
// (it checked for them before parsing).
func firstFault(raw []byte, err error) error {
	if !errors.Is(err, ErrSurrogate) && checkSurrogates(raw) != nil {
		return ErrSurrogate
	}
	return err
}

// parser reads JSON text in and appends its canonical form to out.
type parser struct {
	in      []byte
	pos     int
	out     []byte
	depth   int
	members []member            // the members of the open objects, innermost last
	keys    []byte              // unescaped keys that held escapes
	str     []byte              // an unescaped string value
	tmp     []byte              // an object's members while they are reordered
	scratch []member            // an object's members as read, or in a remembered order
	orders  map[uint64][]uint16 // sorted orders by the shape of their keys (knownOrder)
}

// member is one object member: its unescaped key, and its `"key":value`
// as written in out.
type member struct {
	key        []byte
	start, end int
}

var parsers = sync.Pool{New: func() any { return new(parser) }}

func (p *parser) reset(in, out []byte) {
	p.in, p.pos, p.out, p.depth = in, 0, out, 0
	p.members, p.keys = p.members[:0], p.keys[:0]
}

// release returns p to the pool, holding no caller's bytes.
func (p *parser) release() {
	clear(p.members[:cap(p.members)])
	clear(p.scratch[:cap(p.scratch)])
	p.in, p.out = nil, nil
	if cap(p.tmp) > 1<<16 || cap(p.keys) > 1<<16 || cap(p.str) > 1<<16 {
		p.tmp, p.keys, p.str = nil, nil, nil
	}
	parsers.Put(p)
}

// document reads one value and nothing after it but whitespace.
func (p *parser) document() error {
	if err := p.value(); err != nil {
		return err
	}
	if p.skipSpace(); p.pos < len(p.in) {
		return p.syntax("trailing data after JSON value")
	}
	return nil
}

func (p *parser) value() error {
	p.skipSpace()
	if p.pos >= len(p.in) {
		return p.unexpected()
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.stringValue()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return p.literal()
}

func (p *parser) literal() error {
	for _, lit := range [...]string{"true", "false", "null"} {
		if end := p.pos + len(lit); end <= len(p.in) && string(p.in[p.pos:end]) == lit {
			p.pos = end
			p.out = append(p.out, lit...)
			return nil
		}
	}
	return p.unexpected()
}

func (p *parser) skipSpace() {
	for ; p.pos < len(p.in); p.pos++ {
		if c := p.in[p.pos]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
	}
}

// open enters the array or object at p.pos.
func (p *parser) open() error {
	if p.depth++; p.depth > maxDepth {
		return fmt.Errorf("%w: at offset %d", ErrDepth, p.pos)
	}
	p.out = append(p.out, p.in[p.pos])
	p.pos++
	return nil
}

// more reports whether another element follows in the array or object
// that end closes, consuming the comma before it, or the end.
func (p *parser) more(end byte, first bool) (bool, error) {
	p.skipSpace()
	switch {
	case p.pos < len(p.in) && p.in[p.pos] == end:
		p.pos++
		p.depth--
		return false, nil
	case first:
		return true, nil
	case p.pos < len(p.in) && p.in[p.pos] == ',':
		p.pos++
		return true, nil
	}
	return false, p.unexpected()
}

func (p *parser) array() error {
	if err := p.open(); err != nil {
		return err
	}
	for first := true; ; first = false {
		more, err := p.more(']', first)
		if err != nil || !more {
			p.out = append(p.out, ']')
			return err
		}
		if !first {
			p.out = append(p.out, ',')
		}
		if err := p.value(); err != nil {
			return err
		}
	}
}

// expect consumes c after optional whitespace.
func (p *parser) expect(c byte) error {
	if p.skipSpace(); p.pos < len(p.in) && p.in[p.pos] == c {
		p.pos++
		return nil
	}
	return p.unexpected()
}

func (p *parser) unexpected() error {
	if p.pos >= len(p.in) {
		return p.syntax("unexpected end of JSON input")
	}
	return p.syntax(fmt.Sprintf("invalid character %q", p.in[p.pos]))
}

func (p *parser) syntax(what string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrSyntax, what, p.pos)
}
