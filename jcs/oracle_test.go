package jcs

// The canonicalizer and call digest as they were before the single-pass
// writer: kept here only, as the oracle the differential tests and the
// benchmarks compare the new code with.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// oldCanonicalize returns the RFC 8785 (JCS) canonical form of the JSON text
// raw. It refuses duplicate keys, invalid UTF-8, and numbers that an IEEE
// double cannot hold exactly as written (ErrDuplicateKey, ErrInvalidUTF8,
// ErrNumber), lone surrogate escapes such as "\ud800" (ErrSurrogate), and
// any other malformed JSON.
func oldCanonicalize(raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) {
		return nil, ErrInvalidUTF8
	}
	if err := oldCheckSurrogates(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := oldCanonValue(dec, &buf); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("jcs: trailing data after JSON value")
	}
	return buf.Bytes(), nil
}

// oldCheckSurrogates refuses a \u escape of a UTF-16 surrogate that is not
// a high surrogate directly followed by an escaped low one: encoding/json
// would silently turn it into U+FFFD. Raw UTF-8 cannot hold surrogates
// (utf8.Valid refuses them), so escapes are the only way in.
func oldCheckSurrogates(raw []byte) error {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			n, err := oldSurrogateEscape(raw, i)
			if err != nil {
				return err
			}
			i += n
		}
	}
	return nil
}

// oldSurrogateEscape checks the escape at raw[i] (a backslash) and returns
// how many bytes after the backslash it spans.
func oldSurrogateEscape(raw []byte, i int) (int, error) {
	u := oldEscapedUnit(raw, i)
	switch {
	case u < 0xD800 || u > 0xDFFF:
		if u < 0 {
			return 1, nil // not \u: one escaped character
		}
		return 5, nil
	case u <= 0xDBFF:
		if lo := oldEscapedUnit(raw, i+6); lo >= 0xDC00 && lo <= 0xDFFF {
			return 11, nil
		}
	}
	return 0, ErrSurrogate
}

// oldEscapedUnit returns the code unit of a \uXXXX escape at raw[i], or -1.
func oldEscapedUnit(raw []byte, i int) int {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return -1
	}
	n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
	if err != nil {
		return -1
	}
	return int(n)
}

func oldCanonValue(dec *json.Decoder, buf *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return oldCanonObject(dec, buf)
		}
		return oldCanonArray(dec, buf)
	case string:
		oldWriteJCSString(buf, t)
	case json.Number:
		s, err := oldCanonNumber(string(t))
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

func oldCanonArray(dec *json.Decoder, buf *bytes.Buffer) error {
	buf.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := oldCanonValue(dec, buf); err != nil {
			return err
		}
	}
	_, err := dec.Token() // ']'
	buf.WriteByte(']')
	return err
}

func oldCanonObject(dec *json.Decoder, buf *bytes.Buffer) error {
	type member struct {
		key string
		val []byte
	}
	var members []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string)
		if seen[key] {
			return fmt.Errorf("%w: %q", ErrDuplicateKey, key)
		}
		seen[key] = true
		var vb bytes.Buffer
		if err := oldCanonValue(dec, &vb); err != nil {
			return err
		}
		members = append(members, member{key, vb.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return err
	}
	sort.Slice(members, func(i, j int) bool { return oldUtf16Less(members[i].key, members[j].key) })
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		oldWriteJCSString(buf, m.key)
		buf.WriteByte(':')
		buf.Write(m.val)
	}
	buf.WriteByte('}')
	return nil
}

// oldUtf16Less orders keys by their UTF-16 code units, as RFC 8785 requires.
func oldUtf16Less(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

func oldWriteJCSString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(buf, `\u%04x`, r)
			} else {
				buf.WriteRune(r)
			}
		}
	}
	buf.WriteByte('"')
}

// oldCanonNumber formats a JSON number as ECMAScript's Number.prototype.toString
// does, refusing numbers that the double does not hold exactly as written.
func oldCanonNumber(text string) (string, error) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("%w: %s", ErrNumber, text)
	}
	out := oldFormatES6(f)
	want, ok1 := new(big.Rat).SetString(text)
	got, ok2 := new(big.Rat).SetString(out)
	if !ok1 || !ok2 || want.Cmp(got) != 0 {
		return "", fmt.Errorf("%w: %s", ErrNumber, text)
	}
	return out, nil
}

// oldFormatES6 formats f the way ECMAScript's Number.prototype.toString does
// (RFC 8785 §3.2.2.3).
func oldFormatES6(f float64) string {
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
