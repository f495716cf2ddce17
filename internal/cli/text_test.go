package cli

import (
	"encoding/json"
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 0, "plain"},
		{"  two\n\tlines\r\n", 0, "two lines"},
		{"a\u202eb\u200bc\x00d\x1b[31me", 0, `a\u202Eb\u200Bc\u0000d\u001B[31me`},
		{"pay p\u0430ypal at раураӏ.com", 0, "pay ⚠p\u0430ypal(≈paypal) at ⚠раураӏ(≈paypai).com"},
		{"abcdef", 3, "abc…"},
		{"abc", 3, "abc"},
		{"bad\xffutf8", 0, "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		if got := text(tt.in, tt.max); got != tt.want {
			t.Errorf("text(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	if got, want := quote("say \"hi\" \\ \u202e", 0), `"say \"hi\" \\ \u202E"`; got != want {
		t.Errorf("quote = %s, want %s", got, want)
	}
	if got, want := prettyJSON(json.RawMessage("{\"a\":\"x\u202ey\"}"), ""), "{\n  \"a\": \"x\\u202Ey\"\n}"; got != want {
		t.Errorf("prettyJSON = %q, want %q", got, want)
	}
}

// A refusal that is not a problem+json body still reads as one: the
// status, and a shown excerpt of what came instead.
func TestRefusalOfAnotherBody(t *testing.T) {
	p := refusal(502, []byte("<html>\n\u202eBad gateway</html>"))
	if got, want := p.Error(), `HTTP 502: <html> \u202EBad gateway</html>`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
