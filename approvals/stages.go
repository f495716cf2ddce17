package approvals

import (
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/shell"
)

// stagesOf splits a shell request's command into its stages, all waiting
// (SPEC §8).
func stagesOf(command string) []events.Stage {
	split := shell.Split(command)
	out := make([]events.Stage, len(split))
	for i, st := range split {
		out[i] = events.Stage{Text: st.Text, Prefix: st.Prefix, Opaque: st.Opaque, Argv: st.Argv}
	}
	return out
}
