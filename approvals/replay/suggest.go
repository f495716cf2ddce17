package replay

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// Suggestion is, for one agent, a capability or a shell prefix that
// people allowed at least the minimum number of times in the window and
// never denied (SPEC §16): a grant or a read rule to consider.
type Suggestion struct {
	Agent      domain.AgentID `json:"agent"`
	Capability string         `json:"capability"`
	// ShellPrefix is set for a shell stage's prefix (only a prefix the
	// shell command table reads: never an opaque stage, nor one covered
	// by exact words only).
	ShellPrefix []string `json:"shell_prefix,omitempty"`
	Allowed     int      `json:"allowed"`
}

type tally struct {
	allowed int
	denied  bool
}

type suggestKey struct {
	agent      domain.AgentID
	capability string
	prefix     string // the words joined by NUL; "" for the capability
}

// Suggest reads the window's decisions from src, once, and returns what
// people allowed at least min times and never denied, by agent, then
// capability, then prefix. It writes nothing.
func Suggest(src Source, since, until time.Time, min int) ([]Suggestion, error) {
	seen := map[suggestKey]*tally{}
	err := src(func(line []byte) error {
		r, ok, err := decided(line, since, until)
		if err != nil || !ok {
			return err
		}
		for k, allowed := range peopleAnswers(r) {
			t := seen[k]
			if t == nil {
				t = &tally{}
				seen[k] = t
			}
			if allowed {
				t.allowed++
			} else {
				t.denied = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return suggestions(seen, min), nil
}

// peopleAnswers are the people's answers in r, a request's decision: for
// a shell request, each stage a person allowed, and the stage a person
// denied; for any other, the request. true is an allow.
func peopleAnswers(r *domain.Request) map[suggestKey]bool {
	out := map[suggestKey]bool{}
	capStr := r.Capability.String()
	byPerson := r.Decision != nil && r.Decision.By.Kind == domain.KindPerson
	if r.Subject.Kind != domain.SubjectShell {
		if byPerson {
			out[suggestKey{r.Agent, capStr, ""}] = r.Decision.Status == domain.StatusApproved
		}
		return out
	}
	for i, st := range r.Stages {
		if st.Opaque != "" || st.Argv != nil || len(st.Prefix) == 0 {
			continue // the command table does not read it
		}
		k := suggestKey{r.Agent, capStr, strings.Join(st.Prefix, "\x00")}
		switch {
		case st.AllowedBy != nil && st.AllowedBy.Kind == domain.KindPerson:
			if _, ok := out[k]; !ok {
				out[k] = true // a deny of the same prefix in r wins
			}
		case byPerson && r.Decision.Status == domain.StatusDenied && i == r.CurrentStage:
			out[k] = false
		}
	}
	return out
}

func suggestions(seen map[suggestKey]*tally, min int) []Suggestion {
	var out []Suggestion
	for k, t := range seen {
		if t.denied || t.allowed < min {
			continue
		}
		s := Suggestion{Agent: k.agent, Capability: k.capability, Allowed: t.allowed}
		if k.prefix != "" {
			s.ShellPrefix = strings.Split(k.prefix, "\x00")
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Suggestion) int {
		return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Capability, b.Capability),
			slices.Compare(a.ShellPrefix, b.ShellPrefix))
	})
	return out
}

// decided is a request.decided entry of the window, decoded.
func decided(line []byte, since, until time.Time) (*domain.Request, bool, error) {
	return requestEntry(line, since, until, events.TypeRequestDecided)
}
