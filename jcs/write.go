package jcs

import (
	"cmp"
	"math"
	"strconv"
	"unicode/utf8"
)

// The canonical writer: strings, numbers and key order as RFC 8785 §3.2
// writes them. Canonicalize and domain.CallDigest both write through it.

// appendString appends s, valid UTF-8, as a canonical JSON string: '"',
// '\' and control characters escaped (\b \t \n \f \r, else \u00xx in
// lowercase), every other character as itself.
func appendString[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, c)
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// shortEscapes are the two-character escapes RFC 8785 writes.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r'}

func appendEscape(dst []byte, c byte) []byte {
	if e := shortEscapes[c]; e != 0 {
		return append(dst, '\\', e)
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
}

// AppendString appends the Go string s as a canonical JSON string, each
// byte of invalid UTF-8 as U+FFFD, as ranging over s reads it.
func AppendString(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendString(dst, s)
	}
	var valid []byte
	for _, r := range s {
		valid = utf8.AppendRune(valid, r)
	}
	return appendString(dst, valid)
}

// compareUTF16 orders keys a and b, valid UTF-8, by their UTF-16 code
// units as RFC 8785 §3.2.3 requires, without converting them.
func compareUTF16(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	switch {
	case i == len(a) || i == len(b):
		return cmp.Compare(len(a), len(b))
	case a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf:
		return cmp.Compare(a[i], b[i])
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return cmp.Compare(utf16Rank(ra), utf16Rank(rb))
}

// utf16Rank orders runes as their UTF-16 code units do: U+E000 to U+FFFF
// after the surrogate pairs of U+10000 and above, code point order
// otherwise.
func utf16Rank(r rune) rune {
	if r >= 0xE000 && r <= 0xFFFF {
		return r + utf8.MaxRune + 1
	}
	return r
}

// FormatES6 formats f the way ECMAScript's Number.prototype.toString does
// (RFC 8785 §3.2.2.3). f must be finite: JSON holds no NaN or infinity.
func FormatES6(f float64) string {
	return string(AppendES6(nil, f))
}

// AppendES6 appends f formatted as FormatES6 does.
func AppendES6(dst []byte, f float64) []byte {
	switch {
	case f == 0:
		return append(dst, '0')
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.AppendInt(dst, int64(f), 10) // exact: below 2**53
	}
	var d decimal
	d.set(f)
	return appendDecimal(dst, f < 0, &d)
}

// decimal holds a finite nonzero number's shortest round-tripping digits:
// its magnitude is 0.digits × 10**point.
type decimal struct {
	buf       [24]byte
	nd, point int
}

func (d *decimal) digits() []byte { return d.buf[:d.nd] }

// set makes d the shortest digits that read back as f, f finite and
// nonzero.
func (d *decimal) set(f float64) {
	s := strconv.AppendFloat(d.buf[:0], math.Abs(f), 'e', -1, 64) // d[.ddd]e±xx
	e := len(s) - 1
	for s[e] != 'e' {
		e--
	}
	d.point = atoiSigned(s[e+1:]) + 1
	d.nd = e
	if e > 1 { // drop the '.'
		copy(s[1:], s[2:e])
		d.nd = e - 1
	}
}

// atoiSigned reads a short decimal with a sign, such as "+21" or "-07".
func atoiSigned(s []byte) int {
	n := 0
	for _, c := range s[1:] {
		n = n*10 + int(c-'0')
	}
	if s[0] == '-' {
		return -n
	}
	return n
}

// appendDecimal writes d as ECMAScript does (ECMA-262 Number::toString):
// plain digits from 1e-6 up to 1e21, exponent form outside.
func appendDecimal(dst []byte, neg bool, d *decimal) []byte {
	if neg {
		dst = append(dst, '-')
	}
	digits, k, n := d.digits(), d.nd, d.point
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		return appendZeros(dst, n-k)
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		return append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = appendZeros(append(dst, '0', '.'), -n)
		return append(dst, digits...)
	}
	return appendExponent(dst, d)
}

// appendExponent writes d as d[.ddd]e±n.
func appendExponent(dst []byte, d *decimal) []byte {
	digits := d.digits()
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(append(dst, '.'), digits[1:]...)
	}
	dst = append(dst, 'e')
	if d.point-1 >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(d.point-1), 10)
}

func appendZeros(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, '0')
	}
	return dst
}
