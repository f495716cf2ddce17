package approvals

import (
	"strings"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/shell"
)

// stagesOf splits a shell request's command into its stages, all waiting
// (SPEC §8).
func stagesOf(command string) []domain.Stage {
	split := shell.Split(command)
	out := make([]domain.Stage, len(split))
	for i, st := range split {
		out[i] = domain.Stage{Text: st.Text, Prefix: st.Prefix, Opaque: st.Opaque, Argv: st.Argv}
		out[i].Grant = GrantText(&out[i])
	}
	return out
}

// GrantText says which grant a session or lifetime allow of st leaves
// (stageMatch), as every surface shows it beside the allow choices: "any
// `git push …`" for a prefix grant, "exactly this command" for a grant of
// its exact words, "no grant: …" for a stage no grant covers.
func GrantText(st *domain.Stage) string {
	switch m := stageMatch(st, ""); {
	case m == nil:
		return GrantTextNone
	case m.ShellArgv != nil:
		return GrantTextExact
	default:
		return "any `" + strings.Join(m.ShellPrefix, " ") + " …`"
	}
}

// The texts of GrantText that name no prefix.
const (
	GrantTextExact = "exactly this command"
	GrantTextNone  = "no grant: it always reaches a decider"
)
