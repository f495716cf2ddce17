package busapi_test

import (
	"net/http"
	"testing"
)

// The server says what a call is on the bus too (SPEC §8): api.submit of
// Bash without a subject is a shell request, so a lifetime allow of `ls`
// leaves a grant of `ls` that a later `rm -rf /` does not use; one
// declaring another kind is 400 (field subject) and stores nothing.
func TestSubmitShellToolIsShell(t *testing.T) {
	e := start(t, acmeYAML)
	submit := func(cmd string) reply {
		return e.req("acme", "submit", tokMain, obj{"tool": "Bash", "arguments": obj{"command": cmd}}).want(t, "submit "+cmd, http.StatusCreated)
	}
	ls := submit("ls")
	if sub, _ := ls.body["subject"].(map[string]any); sub["kind"] != "shell" || sub["command"] != "ls" {
		t.Errorf("Bash ls without a subject: subject %v, want shell ls", ls.body["subject"])
	}
	e.req("acme", "answer", tokPerson, obj{"id": ls.body["id"], "expected": 0, "decision": "allow", "scope": "lifetime"}).
		want(t, "allow ls for the agent's lifetime", http.StatusOK)
	if rm := submit("rm -rf /"); rm.body["status"] != "pending" {
		t.Errorf("Bash rm -rf / after a lifetime allow of ls: %s, want pending", rm.raw)
	}
	e.req("acme", "submit", tokMain, obj{"tool": "Bash", "arguments": obj{"command": "rm -rf /"}, "subject": obj{"kind": "tool"}}).
		wantProblem(t, "Bash as a tool", http.StatusBadRequest, "InvalidRequest", "subject")
	e.req("acme", "submit", tokMain, obj{"tool": "Bash", "arguments": obj{"command": 7}}).
		wantProblem(t, "Bash without a command line", http.StatusBadRequest, "InvalidRequest", "arguments.command")
	if n := len(e.http.Pending(tokPerson)); n != 1 {
		t.Errorf("%d requests wait on the person, want 1 (rm -rf /, and no refused submit)", n)
	}
}
