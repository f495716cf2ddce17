package display

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mark and markLike frame a look-alike word in text: ⚠pаypal(≈paypal).
const (
	Mark     = "⚠"
	markLike = "(≈"
	markEnd  = ")"
)

// Text shows s as prose: hidden characters escaped (a line break stays
// one), look-alike words marked.
func Text(s string) string { return render(s, false) }

// JSONText shows s as the content of a JSON string literal, the way the
// inbox shows a stored string: like Text, and also `"` and `\` escaped,
// \n \r \t \b \f as JSON writes them.
func JSONText(s string) string { return render(s, true) }

func render(s string, json bool) string {
	var b strings.Builder
	for _, p := range pieces(s, json) {
		switch p.kind {
		case lookAlike:
			b.WriteString(Mark + p.text + markLike + p.like + markEnd)
		default:
			b.WriteString(p.text)
		}
	}
	return b.String()
}

type kind int

const (
	plain kind = iota
	escaped
	lookAlike
)

// piece is one run of shown text: plain text, one escape, or a look-alike
// word with the ASCII it imitates.
type piece struct {
	kind kind
	text string
	like string
}

// pieces cuts s into words (runs of letters, marks and digits) and the
// characters between them, and shows each.
func pieces(s string, json bool) []piece {
	var out []piece
	runes := []rune(strings.ToValidUTF8(s, "\uFFFD"))
	for i := 0; i < len(runes); {
		j := i
		for j < len(runes) && wordRune(runes[j]) {
			j++
		}
		if j > i {
			out = appendWord(out, runes[i:j], json)
			i = j
			continue
		}
		out = appendRune(out, runes[i], json)
		i++
	}
	return out
}

func wordRune(r rune) bool { return unicode.In(r, unicode.L, unicode.M, unicode.N) }

func appendWord(out []piece, word []rune, json bool) []piece {
	if like, ok := LookAlike(string(word)); ok {
		return append(out, piece{kind: lookAlike, text: string(word), like: like})
	}
	for _, r := range word {
		out = appendRune(out, r, json)
	}
	return out
}

// appendRune adds r, escaped if it is hidden (or, in JSON, `"` or `\`),
// merging plain text into the last piece.
func appendRune(out []piece, r rune, json bool) []piece {
	if e := escape(r, json); e != "" {
		return append(out, piece{kind: escaped, text: e})
	}
	if n := len(out); n > 0 && out[n-1].kind == plain {
		out[n-1].text += string(r)
		return out
	}
	return append(out, piece{kind: plain, text: string(r)})
}

// jsonEscapes are JSON's short escapes, as JSON writes them.
var jsonEscapes = map[rune]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\b': `\b`, '\f': `\f`}

// escape returns how r is shown when it must not be rendered, or "".
func escape(r rune, json bool) string {
	if json && (r == '"' || r == '\\') {
		return jsonEscapes[r]
	}
	if r == ' ' || (!json && r == '\n') || !Hidden(r) {
		return ""
	}
	if e, ok := jsonEscapes[r]; ok && json {
		return e
	}
	return Escape(r)
}

// Escape is the visible escape of r: \u202E, or \u{E0041} above the BMP.
func Escape(r rune) string {
	h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	if r > 0xFFFF {
		return `\u{` + h + `}`
	}
	return `\u` + strings.Repeat("0", 4-len(h)) + h
}

// Hidden reports whether r is shown as an escape: a control, format,
// surrogate, private-use or unassigned code point, a line or paragraph
// separator, a space other than U+0020, a variation selector, U+034F or
// an invisible Hangul filler.
func Hidden(r rune) bool {
	switch {
	case r == ' ':
		return false
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Cs, unicode.Co, unicode.Zl, unicode.Zp, unicode.Zs):
		return true
	case r == '\u034F' || r == '\u115F' || r == '\u1160' || r == '\u3164' || r == '\uFFA0':
		return true
	case r >= '\uFE00' && r <= '\uFE0F', r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return !utf8.ValidRune(r) || !assigned(r)
}

func assigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

// LookAlike reports whether word is a look-alike: not ASCII, but every
// rune of it ASCII or in the skeleton table, so that its TR39 skeleton is
// ASCII. like is the word with each rune replaced by its prototype.
func LookAlike(word string) (like string, ok bool) {
	var b strings.Builder
	for _, r := range word {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		p, in := prototypes[r]
		if !in {
			return "", false
		}
		b.WriteString(p)
		ok = true
	}
	return b.String(), ok
}

// Prototypes returns a copy of the skeleton table: each letter, mark or
// digit outside ASCII whose TR39 skeleton is ASCII, and that skeleton.
func Prototypes() map[rune]string {
	m := make(map[rune]string, len(prototypes))
	for r, p := range prototypes {
		m[r] = p
	}
	return m
}
