package rpc_test

import (
	"strings"
	"testing"
)

// choiceLabels maps each of a notification's choiceIds to its label.
func choiceLabels(n msg) map[string]string {
	out := map[string]string{}
	list, _ := n.Params["availableChoices"].([]any)
	for _, c := range list {
		m := c.(map[string]any)
		out[m["choiceId"].(string)] = m["label"].(string)
	}
	return out
}

// The lasting allows of a shell request say which grant they leave for
// the current stage: any `git push …` for a stage the command table
// reads, exactly this command for one it does not (SPEC §8).
func TestChoiceLabelsSayWhichGrant(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"sessionIds": []string{"ses-g"}})
	for cmd, want := range map[string]string{
		"git push origin main": ": any `git push …`",
		"sqlite3 db .tables":   ": exactly this command",
	} {
		id := submit(t, s, tokMain, map[string]any{"tool": "Bash", "session": "ses-g", "arguments": map[string]any{"command": cmd},
			"subject": map[string]any{"kind": "shell", "command": cmd}})["id"].(string)
		labels := choiceLabels(w.expect("approval/requested", id))
		for _, c := range []string{"allow_session", "allow_always"} {
			if !strings.HasSuffix(labels[c], want) {
				t.Errorf("%q: %s label %q, want it to end %q", cmd, c, labels[c], want)
			}
		}
		if labels["allow_once"] != "Allow once" {
			t.Errorf("%q: allow_once label %q", cmd, labels["allow_once"])
		}
	}
}
