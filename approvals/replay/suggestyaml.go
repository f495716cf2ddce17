package replay

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
)

// WriteSuggestions writes ss as YAML a person may paste, with the
// counts: per agent, the capabilities (a read rule, or a lifetime grant
// left by answering the next one with scope lifetime) and the shell
// prefixes (a lifetime grant of that prefix). Nothing is applied.
func WriteSuggestions(w io.Writer, ss []Suggestion, since time.Time, min int) error {
	if _, err := fmt.Fprintf(w, "# allowed by people at least %d times and never denied since %s; nothing is applied\n",
		min, since.UTC().Format(time.RFC3339)); err != nil {
		return err
	}
	if len(ss) == 0 {
		_, err := fmt.Fprintln(w, "suggestions: {}")
		return err
	}
	fmt.Fprintln(w, "suggestions:")
	var agent domain.AgentID
	for _, s := range ss {
		if s.Agent != agent {
			agent = s.Agent
			fmt.Fprintf(w, "  %s:\n", strconv.Quote(string(agent)))
		}
		if s.ShellPrefix == nil {
			fmt.Fprintf(w, "    - {capability: %s, allowed: %d}\n", strconv.Quote(s.Capability), s.Allowed)
			continue
		}
		fmt.Fprintf(w, "    - {capability: %s, shell_prefix: [", strconv.Quote(s.Capability))
		for i, word := range s.ShellPrefix {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprint(w, strconv.Quote(word))
		}
		fmt.Fprintf(w, "], allowed: %d}\n", s.Allowed)
	}
	return nil
}
