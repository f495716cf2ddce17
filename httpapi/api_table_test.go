package httpapi_test

import (
	"net/http"
	"testing"
)

// Issue 33, item 2, through the API: a session allow of a command the
// command table does not have leaves a grant of exactly its words, which
// approves it again and never the dangerous call beside it; the stage
// says so before the allow.
func TestAPIShellUnknownCommandExactGrant(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	for i, c := range []struct{ benign, danger, argv string }{
		{"sqlite3 db .tables", "sqlite3 db '.shell id'", `["sqlite3","db",".tables"]`},
		{"psql -l", `psql -c '\! id'`, `["psql","-l"]`},
		{"podman run alpine", "podman run alpine sh -c id", `["podman","run","alpine"]`},
		{"zip -r a.zip d", "zip -r a.zip d -T -TT 'sh -c id'", `["zip","-r","a.zip","d"]`},
		{"tcpdump -r a.pcap", "tcpdump -r a.pcap -w x -z /tmp/evil", `["tcpdump","-r","a.pcap"]`},
	} {
		session := "s" + string(rune('a'+i))
		rec := main.bash(c.benign, session)
		if g := str(stagesOf(rec)[0]["grant"]); g != "exactly this command" {
			t.Errorf("%q: stage grant %q, want exactly this command", c.benign, g)
		}
		person.answer(rec, "allow", "session").want(t, "allow "+c.benign+" for the session", http.StatusOK)
		var found bool
		for _, g := range grantsOf(t, person, "?effect=allow") {
			m := obj(g["match"])
			if jsonString(m["shell_argv"]) == c.argv {
				found = true
				if m["shell_prefix"] != nil {
					t.Errorf("%q: its grant has a shell_prefix too: %s", c.benign, jsonString(m))
				}
			}
		}
		if !found {
			t.Errorf("%q: no grant with shell_argv %s", c.benign, c.argv)
		}
		if again := main.bash(c.benign, session); str(again["status"]) != "approved" {
			t.Errorf("%q again in its session: %s, want approved by its exact grant", c.benign, str(again["status"]))
		}
		if d := main.bash(c.danger, session); str(d["status"]) != "pending" {
			t.Errorf("%q after a session allow of %q: %s by %s, want pending", c.danger, c.benign, str(d["status"]), by(d))
		}
	}
	// A command the table reads keeps its prefix grant, and says so.
	rec := main.bash("git push origin main", "sz")
	if g := str(stagesOf(rec)[0]["grant"]); g != "any `git push …`" {
		t.Errorf("git push: stage grant %q, want any `git push …`", g)
	}
	person.answer(rec, "allow", "session").want(t, "allow git push", http.StatusOK)
	if again := main.bash("git push origin topic", "sz"); str(again["status"]) != "approved" {
		t.Errorf("git push origin topic after allowing git push: %s", str(again["status"]))
	}
	if d := main.bash("git push --receive-pack=x origin main", "sz"); str(d["status"]) != "pending" {
		t.Errorf("git push --receive-pack after allowing git push: %s, want pending", str(d["status"]))
	}
}
