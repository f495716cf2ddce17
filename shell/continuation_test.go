package shell

import (
	"slices"
	"testing"
)

// A backslash-newline inside a word is removed, as the shell removes it;
// an escaped backslash before it stays one backslash (bash reads
// `\\\<newline>0` as the word `\0`).
func TestLineContinuationInsideAWord(t *testing.T) {
	for cmd, want := range map[string][]string{
		"\\\\\\\n0":       {`\0`},
		"ec\\\nho a\\\nb": {"echo", "ab"},
	} {
		st := Split(cmd)
		if len(st) != 1 {
			t.Fatalf("Split(%q) = %+v, want one stage", cmd, st)
		}
		got := st[0].Argv // an unknown command: its exact words
		if got == nil {
			got = st[0].Prefix // a known one: its prefix
		}
		if !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %+v, want the words %q", cmd, st[0], want)
		}
	}
}
