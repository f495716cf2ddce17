package judge

import (
	"strings"
	"unicode"

	"github.com/rivo/uniseg"
)

const (
	// maxDisplayClusters bounds a display line, in extended grapheme clusters.
	maxDisplayClusters = 100
	// maxClusterRunes bounds one grapheme cluster ("Zalgo" stacks of
	// combining marks); the longest emoji sequences use 10 or 11 runes.
	maxClusterRunes = 16
	ellipsis        = "…"
)

// abbreviations end in a period that does not end a sentence.
var abbreviations = map[string]bool{
	"mr.": true, "mrs.": true, "ms.": true, "dr.": true, "prof.": true, "st.": true,
	"jr.": true, "sr.": true, "vs.": true, "e.g.": true, "i.e.": true, "cf.": true, "approx.": true,
}

// DisplayLine bounds a judge rationale to one display line (SPEC §6). It
// returns "" for blank input. In order:
//   - invalid UTF-8 becomes U+FFFD;
//   - control and format characters (Unicode Cc and Cf: NUL, bidi controls,
//     zero-width characters, tag characters) are stripped, except whitespace
//     controls and a zero-width joiner inside an emoji sequence;
//   - whitespace (\t \n \r \v \f, U+0085, U+2028, U+2029, other spaces) is
//     folded to spaces, runs collapsed, ends trimmed, so a line break does
//     not end a sentence;
//   - only the first sentence is kept (Unicode UAX #29 sentence boundaries,
//     except that "Dr.", "e.g." and similar abbreviations do not end one);
//   - the result is at most 100 extended grapheme clusters, each at most 16
//     runes; a longer line is cut to 99 and ends in "…".
func DisplayLine(s string) string {
	s = foldSpace(stripInvisible(strings.ToValidUTF8(s, "\uFFFD")))
	s = strings.TrimSpace(firstSentence(s))
	return truncateClusters(s, maxDisplayClusters)
}

// stripInvisible drops control and format characters cluster by cluster,
// keeping whitespace controls and a ZWJ that joins two parts of one cluster.
func stripInvisible(s string) string {
	var b strings.Builder
	state := -1
	var cluster string
	for s != "" {
		cluster, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		writeVisible(&b, []rune(cluster))
	}
	return b.String()
}

func writeVisible(b *strings.Builder, runes []rune) {
	for i, r := range runes {
		if r == '\u200D' && i+1 < len(runes) && joinable(runes[i+1]) {
			b.WriteRune(r)
			continue
		}
		if !invisible(r) {
			b.WriteRune(r)
		}
	}
}

// joinable: a rune a ZWJ may join to (not a mark, control or format rune).
func joinable(r rune) bool {
	return !unicode.In(r, unicode.M, unicode.Cc, unicode.Cf)
}

func invisible(r rune) bool {
	if unicode.Is(unicode.Cf, r) {
		return true
	}
	return unicode.Is(unicode.Cc, r) && !isSpaceControl(r)
}

func isSpaceControl(r rune) bool {
	return strings.ContainsRune("\t\n\v\f\r\u0085", r)
}

// firstSentence returns the first UAX #29 sentence of s, continued past
// sentences that end in a known abbreviation.
func firstSentence(s string) string {
	sentence, rest, _ := uniseg.FirstSentenceInString(s, -1)
	for rest != "" && endsInAbbreviation(sentence) {
		var next string
		next, rest, _ = uniseg.FirstSentenceInString(rest, -1)
		sentence += next
	}
	return sentence
}

func endsInAbbreviation(sentence string) bool {
	fields := strings.Fields(sentence)
	if len(fields) == 0 {
		return false
	}
	last := strings.TrimLeft(fields[len(fields)-1], `("'“‘[`)
	return abbreviations[strings.ToLower(last)]
}

// truncateClusters keeps at most limit grapheme clusters of s, each cut to
// maxClusterRunes; a cut line keeps limit-1 clusters and ends in "…".
func truncateClusters(s string, limit int) string {
	var b strings.Builder
	state := -1
	var cluster string
	for n := 0; s != ""; n++ {
		if n == limit-1 && uniseg.GraphemeClusterCount(s) > 1 {
			return strings.TrimRightFunc(b.String(), unicode.IsSpace) + ellipsis
		}
		cluster, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		b.WriteString(capCluster(cluster))
	}
	return b.String()
}

// capCluster cuts a cluster to maxClusterRunes, never ending on a ZWJ.
func capCluster(c string) string {
	runes := []rune(c)
	if len(runes) <= maxClusterRunes {
		return c
	}
	return strings.TrimRight(string(runes[:maxClusterRunes]), "\u200D")
}
