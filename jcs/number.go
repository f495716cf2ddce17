package jcs

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// jsonNumber is a number as written: text[:dot] is its sign and integer
// digits, text[dot:exp] its '.' and fraction digits (empty if none),
// text[exp:] its 'e', sign and exponent digits (empty if none).
type jsonNumber struct {
	text     []byte
	dot, exp int
}

// number reads a number and writes it in ES6 form.
func (p *parser) number() error {
	n, err := p.scanNumber()
	if err != nil {
		return err
	}
	out, err := appendNumber(p.out, n)
	if err != nil {
		return err
	}
	p.out = out
	return nil
}

// scanNumber reads the number at p.pos by the JSON grammar.
func (p *parser) scanNumber() (jsonNumber, error) {
	start := p.pos
	if p.in[p.pos] == '-' {
		p.pos++
	}
	if err := p.integer(); err != nil {
		return jsonNumber{}, err
	}
	dot := p.pos
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		if err := p.digits(); err != nil {
			return jsonNumber{}, err
		}
	}
	exp := p.pos
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		if p.pos++; p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		if err := p.digits(); err != nil {
			return jsonNumber{}, err
		}
	}
	return jsonNumber{text: p.in[start:p.pos], dot: dot - start, exp: exp - start}, nil
}

// integer reads "0", or a digit from 1 to 9 and more digits.
func (p *parser) integer() error {
	if p.pos < len(p.in) && p.in[p.pos] == '0' {
		p.pos++
		return nil
	}
	return p.digits()
}

// digits reads one digit or more.
func (p *parser) digits() error {
	start := p.pos
	for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == start {
		return p.unexpected()
	}
	return nil
}

// appendNumber appends n in ES6 form if the double nearest to n has the
// value n has as written: its shortest digits mean the same number. So
// 100.50, 1e2 and 0.1 pass; 9007199254740993, 1e400 and 0.1000000000000000055
// (the double's exact value) do not: ErrNumber.
func appendNumber(dst []byte, n jsonNumber) ([]byte, error) {
	if n.smallInteger() {
		if string(n.text) == "-0" {
			return append(dst, '0'), nil
		}
		return append(dst, n.text...), nil
	}
	f, err := strconv.ParseFloat(string(n.text), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || !n.exactly(f) {
		return nil, fmt.Errorf("%w: %s", ErrNumber, n.text)
	}
	return AppendES6(dst, f), nil
}

// smallInteger reports whether n is an integer of at most 15 digits:
// below 2**53, so a double holds it and it is its own ES6 form.
func (n jsonNumber) smallInteger() bool {
	digits := n.dot
	if n.text[0] == '-' {
		digits--
	}
	return n.exp == len(n.text) && n.dot == n.exp && digits <= 15
}

// exactly reports whether n's value equals that of f's shortest digits.
// It refuses, as math/big.Rat.SetString does, an exponent beyond int64 and
// a nonzero n scaled beyond 10**±1e6.
func (n jsonNumber) exactly(f float64) bool {
	exp, ok := n.exponent()
	if !ok {
		return false
	}
	var sig significand
	sig.read(n.text[:n.dot], n.text[n.dot:n.exp])
	switch {
	case sig.nd == 0:
		return f == 0
	case sig.overflow || f == 0 || !scaleOK(exp, n.fractionDigits()):
		return false
	}
	var d decimal
	d.set(f)
	return bytes.Equal(sig.digits(), d.digits()) && int64(sig.intDigits-sig.lead)+exp == int64(d.point)
}

func (n jsonNumber) fractionDigits() int {
	return max(n.exp-n.dot-1, 0)
}

// exponent returns n's exponent, false if int64 cannot hold it.
func (n jsonNumber) exponent() (int64, bool) {
	if n.exp == len(n.text) {
		return 0, true
	}
	s := n.text[n.exp+1:]
	neg := s[0] == '-'
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var v uint64
	for _, c := range s {
		if v > (limit-uint64(c-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// scaleOK reports whether math/big.Rat.SetString accepts a nonzero
// decimal with exponent exp and frac fraction digits.
func scaleOK(exp int64, frac int) bool {
	n := exp - int64(frac)
	if n < 0 {
		if n = -n; n < 0 {
			return false
		}
	}
	return n <= 1e6
}

// significand is the significant digits of a number as written, without
// leading or trailing zeros: at most 17, the most a shortest double has.
type significand struct {
	buf       [17]byte
	nd        int
	lead      int  // leading zeros dropped
	intDigits int  // digits before the '.'
	overflow  bool // more than 17 significant digits
}

func (s *significand) digits() []byte { return s.buf[:s.nd] }

// read takes the integer part (with its sign) and the fraction part (with
// its '.') of a number.
func (s *significand) read(integer, fraction []byte) {
	if integer[0] == '-' {
		integer = integer[1:]
	}
	s.intDigits = len(integer)
	zeros := 0 // zeros seen since the last nonzero digit
	for _, part := range [2][]byte{integer, fraction} {
		for _, c := range part {
			switch {
			case c == '.':
			case c == '0' && s.nd == 0:
				s.lead++
			case c == '0':
				zeros++
			default:
				s.push(zeros, c)
				zeros = 0
			}
		}
	}
}

// push appends zeros zeros and then c.
func (s *significand) push(zeros int, c byte) {
	if s.nd+zeros+1 > len(s.buf) {
		s.overflow = true
		return
	}
	for range zeros {
		s.buf[s.nd] = '0'
		s.nd++
	}
	s.buf[s.nd] = c
	s.nd++
}
