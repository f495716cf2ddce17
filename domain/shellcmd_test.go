package domain

import (
	"encoding/json"
	"testing"
)

// A shell tool's subject carries the command of its arguments: a string,
// a Codex argv (a shell's -c script, or the words quoted), or nothing the
// server will take.
func TestShellSubject(t *testing.T) {
	for in, want := range map[string]string{
		`{"command":"ls; id"}`:                       "ls; id",
		`{"command":["bash","-lc","npm test"]}`:      "npm test",
		`{"command":["git","commit","-m","fix it"]}`: "git commit -m 'fix it'",
		`{"command":["echo","it's"]}`:                `echo 'it'\''s'`,
		`{"command":42}`:                             "",
		`{"cmd":"ls"}`:                               "",
		`not json`:                                   "",
	} {
		s := ShellSubject(json.RawMessage(in))
		if s.Kind != SubjectShell || s.Command != want {
			t.Errorf("%s: %+v, want shell %q", in, s, want)
		}
	}
}
