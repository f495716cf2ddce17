package jcs

import "unicode/utf8"

// key reads an object key, writes it in canonical form, and returns it
// unescaped: a slice of the input when it holds no escape.
func (p *parser) key() ([]byte, error) {
	if p.skipSpace(); p.pos >= len(p.in) || p.in[p.pos] != '"' {
		return nil, p.unexpected()
	}
	raw, escaped, err := p.scanString()
	switch {
	case err != nil:
		return nil, err
	case !escaped:
		p.out = appendQuoted(p.out, raw)
		return raw, nil
	}
	start := len(p.keys)
	if p.keys, err = p.unescape(p.keys, raw); err != nil {
		return nil, err
	}
	key := p.keys[start:len(p.keys):len(p.keys)]
	p.out = appendString(p.out, key)
	return key, nil
}

// stringValue reads a string and writes it in canonical form.
func (p *parser) stringValue() error {
	raw, escaped, err := p.scanString()
	switch {
	case err != nil:
		return err
	case !escaped:
		p.out = appendQuoted(p.out, raw)
		return nil
	}
	if p.str, err = p.unescape(p.str[:0], raw); err != nil {
		return err
	}
	p.out = appendString(p.out, p.str)
	return nil
}

// appendQuoted appends a string that holds no escape: its canonical form
// is itself, since JSON text cannot hold a raw quote, backslash or control
// character there.
func appendQuoted(dst, raw []byte) []byte {
	dst = append(dst, '"')
	dst = append(dst, raw...)
	return append(dst, '"')
}

// scanString reads the string whose opening quote is at p.pos and returns
// the text between its quotes, and whether it holds an escape.
func (p *parser) scanString() (raw []byte, escaped bool, err error) {
	start := p.pos + 1
	for i := start; i < len(p.in); i++ {
		switch c := p.in[i]; {
		case c == '"':
			p.pos = i + 1
			return p.in[start:i], escaped, nil
		case c == '\\':
			escaped = true
			i++ // the escaped byte; unescape checks it
		case c < 0x20:
			p.pos = i
			return nil, false, p.syntax("control character in string")
		}
	}
	p.pos = len(p.in)
	return nil, false, p.unexpected()
}

// unescape appends raw, the text of a string, to dst with its escapes
// decoded.
func (p *parser) unescape(dst, raw []byte) ([]byte, error) {
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst, i = append(dst, raw[i:j]...), j
			continue
		}
		r, n, err := p.escape(raw[i:])
		if err != nil {
			return nil, err
		}
		dst, i = utf8.AppendRune(dst, r), i+n
	}
	return dst, nil
}

// escapes maps the byte after a backslash to the character it stands for.
var escapes = [256]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape decodes the escape at the start of s and returns its character
// and length.
func (p *parser) escape(s []byte) (rune, int, error) {
	if len(s) < 2 {
		return 0, 0, p.syntax("invalid escape in string")
	}
	if s[1] != 'u' {
		if r := escapes[s[1]]; r != 0 {
			return r, 2, nil
		}
		return 0, 0, p.syntax("invalid escape in string")
	}
	return p.unicodeEscape(s)
}

// unicodeEscape decodes the \uXXXX at the start of s, or the surrogate
// pair \uXXXX\uXXXX, refusing a lone surrogate.
func (p *parser) unicodeEscape(s []byte) (rune, int, error) {
	u, ok := hex4(s[2:])
	switch {
	case !ok:
		return 0, 0, p.syntax("invalid \\u escape in string")
	case u < 0xD800 || u > 0xDFFF:
		return u, 6, nil
	case u <= 0xDBFF && len(s) >= 12 && s[6] == '\\' && s[7] == 'u':
		if lo, ok := hex4(s[8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return 0x10000 + (u-0xD800)<<10 + (lo - 0xDC00), 12, nil
		}
	}
	return 0, 0, ErrSurrogate
}

// hex4 decodes four hex digits at the start of s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// checkSurrogates refuses a \u escape of a UTF-16 surrogate that is not
// a high surrogate directly followed by an escaped low one, anywhere in
// raw, without parsing it. Canonicalize uses it only to choose which of
// several faults to report. Raw UTF-8 cannot hold surrogates (utf8.Valid
// refuses them), so escapes are the only way in.
func checkSurrogates(raw []byte) error {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			n, err := surrogateEscape(raw, i)
			if err != nil {
				return err
			}
			i += n
		}
	}
	return nil
}

// surrogateEscape checks the escape at raw[i] (a backslash) and returns
// how many bytes after the backslash it spans.
func surrogateEscape(raw []byte, i int) (int, error) {
	u := escapedUnit(raw, i)
	switch {
	case u < 0xD800 || u > 0xDFFF:
		if u < 0 {
			return 1, nil // not \u: one escaped character
		}
		return 5, nil
	case u <= 0xDBFF:
		if lo := escapedUnit(raw, i+6); lo >= 0xDC00 && lo <= 0xDFFF {
			return 11, nil
		}
	}
	return 0, ErrSurrogate
}

// escapedUnit returns the code unit of a \uXXXX escape at raw[i], or -1.
func escapedUnit(raw []byte, i int) int {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return -1
	}
	u, ok := hex4(raw[i+2 : i+6])
	if !ok {
		return -1
	}
	return int(u)
}
