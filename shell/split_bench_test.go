package shell

import (
	"strings"
	"testing"
)

// Worst cases an agent can send: the longest command of deep nesting.
//
//	go test -run '^$' -bench Split ./shell/
func BenchmarkSplitNested(b *testing.B) {
	for name, cmd := range map[string]string{
		"dollar-paren":  strings.Repeat("$(", MaxLen/4) + "x" + strings.Repeat(")", MaxLen/4),
		"subshell":      strings.Repeat("(", MaxLen/2-1) + "x" + strings.Repeat(")", MaxLen/2-1),
		"backquote-cmd": strings.Repeat("echo $(ls; ", MaxLen/24) + strings.Repeat(")", MaxLen/24),
		"pipeline":      strings.Repeat("a | ", MaxLen/4-1) + "a",
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Split(cmd)
			}
		})
	}
}
