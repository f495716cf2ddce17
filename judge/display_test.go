package judge

import (
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466" // one grapheme cluster

func TestDisplayLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"blank", " \t\r\n\u2028\u00A0 ", ""},
		{"only invisible", "\u202E\u200B\x00\u2066", ""},
		{"one sentence", "The amount is above the limit.", "The amount is above the limit."},
		{"first sentence only", "Too large. Ask finance! Then retry?", "Too large."},
		{"exclamation", "Denied! Really.", "Denied!"},
		{"question", "Is this a refund? Unclear.", "Is this a refund?"},
		{"no final punctuation", "  no punctuation at all  ", "no punctuation at all"},
		{"CRLF folds and does not end a sentence", "Line one\r\nline two. Next.", "Line one line two."},
		{"whitespace controls fold", "a\tb\vc\fd\u0085e\u2028f\u2029g.", "a b c d e f g."},
		{"runs collapse", "a    b \t\t c.", "a b c."},
		{"bidi override stripped", "Refund \u202Eevil\u202C ok.", "Refund evil ok."},
		{"bidi isolates and marks stripped", "\u2067x\u2069\u200Fy\u200E\u061Cz", "xyz"},
		{"zero-width characters stripped", "ap\u200Bpr\u200Cov\u2060e\uFEFFd", "approved"},
		{"ZWJ between letters stripped", "a\u200Db", "ab"},
		{"NUL and C0 controls stripped", "NUL\x00by\x07te\x1b[31m red", "NULbyte[31m red"},
		{"DEL and C1 controls stripped", "a\x7fb\u009bc", "abc"},
		{"tag characters stripped", "ok\U000E0041\U000E0042\U000E007F.", "ok."},
		{"soft hyphen stripped", "re\u00ADfund", "refund"},
		{"invalid UTF-8 replaced", "a\xff\xfeb", "a\uFFFDb"},
		{"emoji ZWJ sequence kept", "Family " + family + " ok. Next.", "Family " + family + " ok."},
		{"combining marks kept", "Cafe\u0301 closed. Next.", "Cafe\u0301 closed."},
		{"Dr. does not end a sentence", "Dr. Smith approved the refund. Then more.", "Dr. Smith approved the refund."},
		{"e.g. does not end a sentence", "Small refunds (e.g. 10 GBP) are fine. More.", "Small refunds (e.g. 10 GBP) are fine."},
		{"decimal does not end a sentence", "Rule 3.2 applies at 42.50 GBP. More.", "Rule 3.2 applies at 42.50 GBP."},
		{"hidden sentence end", "Fine\u200B. Secret.", "Fine."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DisplayLine(tt.in); got != tt.want {
				t.Errorf("DisplayLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDisplayLineBoundsGraphemeClusters(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"100 ASCII kept", strings.Repeat("a", 100), strings.Repeat("a", 100)},
		{"101 ASCII cut", strings.Repeat("a", 101), strings.Repeat("a", 99) + "…"},
		{"100 families kept", strings.Repeat(family, 100), strings.Repeat(family, 100)},
		{"101 families cut", strings.Repeat(family, 101), strings.Repeat(family, 99) + "…"},
		{"combining marks count once", strings.Repeat("e\u0301", 150), strings.Repeat("e\u0301", 99) + "…"},
		{"flags count once", strings.Repeat("\U0001F1EC\U0001F1E7", 120), strings.Repeat("\U0001F1EC\U0001F1E7", 99) + "…"},
		{"zalgo cluster capped", "a" + strings.Repeat("\u0301", 500) + "b", "a" + strings.Repeat("\u0301", 15) + "b"},
		{"cut drops a trailing space", strings.Repeat("a", 98) + " bcd", strings.Repeat("a", 98) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DisplayLine(tt.in)
			if got != tt.want {
				t.Errorf("DisplayLine = %q (%d clusters), want %q", got, uniseg.GraphemeClusterCount(got), tt.want)
			}
			if n := uniseg.GraphemeClusterCount(got); n > maxDisplayClusters {
				t.Errorf("%d clusters, want at most %d", n, maxDisplayClusters)
			}
		})
	}
}
