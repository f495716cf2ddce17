package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/countersign/countersign/display"
	"github.com/countersign/countersign/domain"
)

// Text that comes from agents (reasons, notes, tool names, argument values)
// is data, never instructions: the CLI prints it folded to one line, shown
// by package display (control, format and bidi characters as visible
// escapes, look-alike words marked, as the inbox does), bounded in length,
// and quoted where it is prose.

// text folds runs of ASCII whitespace (newlines and tabs included) to one
// space, keeps at most max runes of that (max <= 0: no bound), marking a
// cut with "…", and shows the rest with display.Text.
func text(s string, max int) string {
	t, cut := fold(s, max)
	return display.Text(t) + cut
}

// fold folds and bounds s for text; cut is "…" when s was cut.
func fold(s string, max int) (t, cut string) {
	var b strings.Builder
	n, space := 0, false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if strings.ContainsRune(" \t\n\v\f\r", r) {
			space = b.Len() > 0
			continue
		}
		if max > 0 && n >= max {
			return b.String(), "…"
		}
		if space {
			b.WriteByte(' ')
			n, space = n+1, false
		}
		b.WriteRune(r)
		n++
	}
	return b.String(), ""
}

// quote is folded text in double quotes, shown the way the inbox shows a
// JSON string (display.JSONText: inner quotes and backslashes escaped), so
// that where the data ends is never in doubt. Empty: "-".
func quote(s string, max int) string {
	t, cut := fold(s, max)
	if t == "" {
		return "-"
	}
	return `"` + display.JSONText(t) + cut + `"`
}

// cell is a table cell: cleaned text, "-" when empty.
func cell(s string) string {
	if t := text(s, 64); t != "" {
		return t
	}
	return "-"
}

func capability(c domain.Capability) string { return text(c.String(), 80) }

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

// prettyJSON shows raw JSON indented, with display.JSON: the same JSON
// value, but nothing in it can move the cursor, reorder text or hide
// itself, and look-alike words are marked.
func prettyJSON(raw json.RawMessage, indent string) string { return display.JSON(raw, indent) }

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
