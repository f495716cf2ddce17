package shell_test

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/shell"
)

// FuzzSplit: whatever the text, Split returns at least one stage and at
// most MaxStages+1, every stage has text, and a stage that may be covered
// has a prefix of one or two words whose command word is a non-empty
// literal and whose second word is not a flag.
func FuzzSplit(f *testing.F) {
	for _, c := range cases {
		f.Add(c.cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		got := shell.Split(cmd)
		if len(got) == 0 || len(got) > shell.MaxStages+1 {
			t.Fatalf("Split(%q): %d stages", cmd, len(got))
		}
		for _, s := range got {
			checkStage(t, cmd, s)
		}
	})
}

func checkStage(t *testing.T, cmd string, s shell.Stage) {
	if s.Text == "" && cmd != "" {
		t.Fatalf("Split(%q): a stage without text: %#v", cmd, s)
	}
	if s.Opaque != "" {
		return
	}
	if n := len(s.Prefix); n == 0 || n > 2 || s.Prefix[0] == "" {
		t.Fatalf("Split(%q): stage %q may be covered with prefix %q", cmd, s.Text, s.Prefix)
	}
	if len(s.Prefix) == 2 && strings.HasPrefix(s.Prefix[1], "-") {
		t.Fatalf("Split(%q): stage %q has a flag in its prefix %q", cmd, s.Text, s.Prefix)
	}
}
