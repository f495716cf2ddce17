package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/countersign/countersign/events"
)

// Text that comes from agents (reasons, notes, tool names, argument values)
// is data, never instructions: the CLI prints it folded to one line, with
// control and format characters (bidi overrides included) removed, bounded
// in length, and quoted where it is prose.

// text folds whitespace runs (newlines and tabs included) to one space,
// drops other control and format characters and invalid UTF-8, and keeps at
// most max runes (max <= 0: no bound), marking a cut with "…".
func text(s string, max int) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range strings.ToValidUTF8(s, "") {
		switch {
		case unicode.IsSpace(r) || r == '\u2028' || r == '\u2029':
			space = b.Len() > 0
			continue
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r):
			continue
		}
		if max > 0 && n >= max {
			return b.String() + "…"
		}
		if space {
			b.WriteByte(' ')
			n, space = n+1, false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// quote is text in double quotes, inner quotes and backslashes
// escaped, so that where the data ends is never in doubt. Empty: "-".
func quote(s string, max int) string {
	t := text(s, max)
	if t == "" {
		return "-"
	}
	return strconv.Quote(t)
}

// cell is a table cell: cleaned text, "-" when empty.
func cell(s string) string {
	if t := text(s, 64); t != "" {
		return t
	}
	return "-"
}

func ref(r *events.Ref) string {
	if r == nil || r.Kind == "" {
		return "-"
	}
	if r.ID == "" {
		return text(r.Kind, 64)
	}
	return text(r.Kind+":"+r.ID, 80)
}

func capability(c events.Capability) string { return text(c.String(), 80) }

// stamp prints t in UTC to the second, "-" when zero.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// until says how far t is from now, for deadlines.
func until(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d <= 0:
		return "passed"
	case d < time.Minute:
		return "in " + d.Round(time.Second).String()
	default:
		return "in " + strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
}

// prettyJSON indents raw JSON and escapes every control, format and
// line-separator character inside strings as \uXXXX: the same JSON value,
// but nothing in it can move the cursor, reorder text or hide itself.
func prettyJSON(raw json.RawMessage, indent string) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, indent, "  "); err != nil {
		return strconv.Quote(string(raw))
	}
	var b strings.Builder
	for _, r := range buf.String() {
		if r == '\n' || !(unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029') {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.String()
}

// writeJSON prints v as JSON on one line.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeRaw prints a server's JSON answer as it came, on its own line.
func writeRaw(w io.Writer, raw []byte) {
	fmt.Fprintf(w, "%s\n", bytes.TrimSpace(raw))
}
