package display

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// vector is one case of testdata/vectors.json, which the inbox's browser
// test runs too: text and json are what Text and JSONText show; escaped,
// json_escaped and marked are what the inbox shows (its marks are
// elements, so its text has none) and which characters it marks.
type vector struct {
	In          string `json:"in"`
	Text        string `json:"text"`
	JSON        string `json:"json"`
	Escaped     string `json:"escaped"`
	JSONEscaped string `json:"json_escaped"`
	Marked      string `json:"marked"`
}

func vectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// unmarked is what the inbox shows of s: escapes, look-alike words as
// they are, and the look-alike characters it marks.
func unmarked(s string, json bool) (shown, marked string) {
	var b, m strings.Builder
	for _, p := range pieces(s, json) {
		b.WriteString(p.text)
		if p.kind != lookAlike {
			continue
		}
		for _, r := range p.text {
			if r >= utf8.RuneSelf {
				m.WriteRune(r)
			}
		}
	}
	return b.String(), m.String()
}

func TestVectors(t *testing.T) {
	for _, v := range vectors(t) {
		if got := Text(v.In); got != v.Text {
			t.Errorf("Text(%q) = %q, want %q", v.In, got, v.Text)
		}
		if got := JSONText(v.In); got != v.JSON {
			t.Errorf("JSONText(%q) = %q, want %q", v.In, got, v.JSON)
		}
		shown, marked := unmarked(v.In, false)
		if shown != v.Escaped || marked != v.Marked {
			t.Errorf("%q shown as %q marking %q, want %q marking %q", v.In, shown, marked, v.Escaped, v.Marked)
		}
		if shown, _ := unmarked(v.In, true); shown != v.JSONEscaped {
			t.Errorf("%q shown in JSON as %q, want %q", v.In, shown, v.JSONEscaped)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	if got, want := Text("a\xffb\xc0"), "a\uFFFDb\uFFFD"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

func TestJSON(t *testing.T) {
	raw := json.RawMessage(`{"zeta":1,"10":[2,49.50],"f\u202e":"p\u0430y\"pal","raw":"x` + "\u200b" + `y","bad":"\ud800"}`)
	want := "{\n>  \"zeta\": 1,\n>  \"10\": [\n>    2,\n>    49.50\n>  ],\n>  \"f\\u202E\": \"⚠pаy(≈pay)\\\"pal\",\n" +
		">  \"raw\": \"x\\u200By\",\n>  \"bad\": \"\uFFFD\"\n>}"
	if got := JSON(raw, ">"); got != want {
		t.Errorf("JSON =\n%s\nwant\n%s", got, want)
	}
	if got, want := JSON(json.RawMessage("not \u202e json"), ""), `"not \u202E json"`; got != want {
		t.Errorf("JSON of non-JSON = %s, want %s", got, want)
	}
}

func TestEscape(t *testing.T) {
	for r, want := range map[rune]string{0x202E: `\u202E`, 0x7: `\u0007`, 0xE0041: `\u{E0041}`, 0x10FFFF: `\u{10FFFF}`} {
		if got := Escape(r); got != want {
			t.Errorf("Escape(%U) = %s, want %s", r, got, want)
		}
	}
}
