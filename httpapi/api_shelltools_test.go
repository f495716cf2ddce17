package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// The server, not the requester, says what a call is (SPEC §8): a call of
// one of the tenant's shell_tools is a shell request whatever it declares.

// shellSub is a shell subject of command as jsonString writes it.
func shellSub(command string) string {
	return jsonString(map[string]any{"kind": "shell", "command": command})
}

// The attack: Bash `ls` sent without a subject, allowed for the
// agent's lifetime, must leave a grant of `ls` only, never of the whole
// tool, so that a later `rm -rf /` (with or without a subject) still
// reaches a decider.
func TestAPIShellToolWithoutSubjectIsShell(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	bare := func(cmd string) map[string]any {
		return main.submit(map[string]any{"tool": "Bash", "arguments": map[string]any{"command": cmd}})
	}
	ls := bare("ls")
	if sub := jsonString(ls["subject"]); sub != shellSub("ls") || len(stagesOf(ls)) != 1 {
		t.Errorf("Bash ls without a subject: subject %s, stages %s; want the server's shell subject of ls", sub, jsonString(ls["stages"]))
	}
	person.answer(ls, "allow", "lifetime").want(t, "allow ls for the agent's lifetime", http.StatusOK)
	grants := grantsOf(t, person, "?effect=allow")
	if len(grants) != 1 || jsonString(obj(grants[0]["match"])["shell_prefix"]) != `["ls"]` {
		t.Errorf("grants after allowing ls: %s, want one with shell_prefix [ls]", jsonString(grants))
	}
	if rec := bare("rm -rf /"); str(rec["status"]) != "pending" {
		t.Errorf("Bash rm -rf / without a subject after a lifetime allow of ls: %s by %s, want pending", str(rec["status"]), by(rec))
	}
	if rec := main.bash("rm -rf /", ""); str(rec["status"]) != "pending" {
		t.Errorf("Bash rm -rf / as a shell subject: %s by %s, want pending", str(rec["status"]), by(rec))
	}
	if len(grants) != 1 {
		return
	}
	if rec := bare("ls -la"); str(rec["status"]) != "approved" || by(rec) != "grant/"+str(grants[0]["id"]) {
		t.Errorf("Bash ls -la without a subject: %s by %s, want approved by the ls grant", str(rec["status"]), by(rec))
	}
}

// Every default shell tool, named as tool or as a tools.call target (or
// as an apps.call's tool), gets the server's subject; one declaring
// another kind, or another command, or whose arguments hold no command
// line, is 400 and stores nothing.
func TestAPIShellToolSubjectChecked(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	for _, tool := range []string{"Bash", "shell", "run_shell_command", "exec_command", "local_shell"} {
		rec := main.submit(map[string]any{"capability": map[string]any{"action": "tools.call", "target": tool},
			"arguments": map[string]any{"command": "git status"}})
		if sub := jsonString(rec["subject"]); sub != shellSub("git status") {
			t.Errorf("%s without a subject: subject %s, want shell git status", tool, sub)
		}
	}
	rec := main.submit(map[string]any{"capability": map[string]any{"action": "apps.call", "target": "conn-1/Bash"},
		"arguments": map[string]any{"command": "ls"}, "connection": map[string]any{"id": "conn-1", "revision": 1}})
	if sub := jsonString(rec["subject"]); sub != shellSub("ls") {
		t.Errorf("apps.call conn-1/Bash without a subject: subject %s, want shell ls", sub)
	}
	rec = main.submit(map[string]any{"tool": "Bash", "arguments": map[string]any{"command": "ls"},
		"subject": map[string]any{"kind": "shell", "protected_write": true}})
	if sub := jsonString(rec["subject"]); sub != jsonString(map[string]any{"kind": "shell", "command": "ls", "protected_write": true}) {
		t.Errorf("Bash with a shell subject marked protected_write: subject %s, want it kept and its command filled", sub)
	}
	before := adminCount(t, url)
	for _, tc := range []struct {
		name, field string
		body        map[string]any
	}{
		{"kind tool", "subject", map[string]any{"tool": "Bash", "arguments": map[string]any{"command": "rm -rf /"}, "subject": map[string]any{"kind": "tool"}}},
		{"kind tool, as a target", "subject", map[string]any{"capability": map[string]any{"action": "tools.call", "target": "shell"},
			"arguments": map[string]any{"command": "rm -rf /"}, "subject": map[string]any{"kind": "tool"}}},
		{"another kind", "subject", map[string]any{"tool": "run_shell_command", "arguments": map[string]any{"command": "rm -rf /"}, "subject": map[string]any{"kind": "computer_use"}}},
		{"another command", "subject", map[string]any{"tool": "exec_command", "arguments": map[string]any{"command": "rm -rf /"}, "subject": map[string]any{"kind": "shell", "command": "ls"}}},
		{"kind tool on an apps.call", "subject", map[string]any{"capability": map[string]any{"action": "apps.call", "target": "conn-1/shell"},
			"arguments": map[string]any{"command": "rm -rf /"}, "subject": map[string]any{"kind": "tool"}}},
		{"no command", "arguments.command", map[string]any{"tool": "Bash", "arguments": map[string]any{"cmd": "rm -rf /"}}},
		{"empty arguments", "arguments.command", map[string]any{"tool": "local_shell", "arguments": map[string]any{}}},
		{"command a number", "arguments.command", map[string]any{"tool": "Bash", "arguments": map[string]any{"command": 7}}},
		{"command null", "arguments.command", map[string]any{"tool": "Bash", "arguments": map[string]any{"command": nil}}},
		{"command an object", "arguments.command", map[string]any{"tool": "Bash", "arguments": map[string]any{"command": map[string]any{"sh": "ls"}}}},
		{"command empty", "arguments.command", map[string]any{"tool": "Bash", "arguments": map[string]any{"command": "  "}}},
		{"command an empty argv", "arguments.command", map[string]any{"tool": "shell", "arguments": map[string]any{"command": []string{}}}},
		{"command an argv of numbers", "arguments.command", map[string]any{"tool": "shell", "arguments": map[string]any{"command": []int{1, 2}}}},
		{"command too long", "arguments.command", map[string]any{"tool": "Bash", "arguments": map[string]any{"command": "ls " + strings.Repeat("a", 64<<10)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			main.do("POST", "/v1/requests", tc.body).wantProblem(t, tc.name, http.StatusBadRequest, "InvalidRequest", tc.field)
		})
	}
	if got := adminCount(t, url); got != before {
		t.Errorf("refused shell calls stored %d requests, want none", got-before)
	}
}

// The tenant's shell_tools replace the default: a tool it names is a
// shell request, one it does not (even Bash) keeps the subject it
// declares; [] names none.
func TestAPIShellToolsSetting(t *testing.T) {
	t.Parallel()
	with := func(setting string) *client {
		yaml := strings.Replace(acmeYAML, "    request_timeout: 1h\n", "    request_timeout: 1h\n    shell_tools: "+setting+"\n", 1)
		return newClient(t, servertest.Start(t, servertest.WithConfig(yaml)).URL, tokMain)
	}
	subjectOf := func(c *client, tool string) string {
		return jsonString(c.submit(map[string]any{"tool": tool, "arguments": map[string]any{"command": "ls"}})["subject"])
	}
	own := with("[my_sh]")
	if got := subjectOf(own, "my_sh"); got != shellSub("ls") {
		t.Errorf("shell_tools [my_sh]: my_sh gets subject %s, want shell ls", got)
	}
	if got := subjectOf(own, "Bash"); got != `{"kind":"tool"}` {
		t.Errorf("shell_tools [my_sh]: Bash gets subject %s, want the default, tool", got)
	}
	own.do("POST", "/v1/requests", map[string]any{"tool": "my_sh", "arguments": map[string]any{"command": "ls"}, "subject": map[string]any{"kind": "tool"}}).
		wantProblem(t, "my_sh as a tool", http.StatusBadRequest, "InvalidRequest", "subject")
	if got := subjectOf(with("[]"), "Bash"); got != `{"kind":"tool"}` {
		t.Errorf("shell_tools []: Bash gets subject %s, want tool", got)
	}
}

// An approval with edits of a shell tool's call is re-derived as a submit
// of it is: the edited arguments need a command line, and the record's
// subject and stages become those of the edited command.
func TestAPIEditShellToolRederived(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.submit(map[string]any{"tool": "Bash", "arguments": map[string]any{"command": "rm -rf /"}, "session": "s1"})
	path := "/v1/requests/" + str(rec["id"])
	for name, args := range map[string]string{
		"no command":       `{"cmd":"ls"}`,
		"command a number": `{"command":7}`,
		"command empty":    `{"command":""}`,
	} {
		person.do("POST", path, `{"expected":0,"decision":"allow","arguments":`+args+`}`).
			wantProblem(t, "edit, "+name, http.StatusBadRequest, "InvalidRequest", "arguments.command")
	}
	if got := main.get(str(rec["id"])); num(got["revision"]) != 0 || got["edited"] != nil {
		t.Fatalf("refused edits changed the request: %s", jsonString(got))
	}
	person.do("POST", path, `{"expected":0,"decision":"allow","arguments":{"command":"ls /tmp && pwd"}}`).want(t, "edit to ls && pwd", http.StatusOK)
	got := main.get(str(rec["id"]))
	if sub := jsonString(got["subject"]); sub != shellSub("ls /tmp && pwd") || len(stagesOf(got)) != 2 || str(got["status"]) != "approved" {
		t.Errorf("after the edit: subject %s, %d stages, status %s; want shell of the edited command, 2 stages, approved",
			sub, len(stagesOf(got)), str(got["status"]))
	}
}

// An edit re-derives the call with the tenant's shell_tools as they are
// at the edit: a request kept as a tool before a reload named its tool a
// shell tool is edited as a shell request.
func TestAPIEditShellToolAfterReload(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "countersign.yaml")
	config := func(setting string) {
		yaml := strings.Replace(acmeYAML, "    request_timeout: 1h\n", "    request_timeout: 1h\n    shell_tools: "+setting+"\n", 1)
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config("[]")
	srv := servertest.Start(t, servertest.WithConfigFile(path))
	main, person := newClient(t, srv.URL, tokMain), newClient(t, srv.URL, tokPerson)
	rec := main.submit(map[string]any{"tool": "my_sh", "arguments": map[string]any{"command": "rm -rf /"}})
	if sub := jsonString(rec["subject"]); sub != `{"kind":"tool"}` {
		t.Fatalf("my_sh before the reload: subject %s, want tool", sub)
	}
	config("[my_sh]")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.App.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	path2 := "/v1/requests/" + str(rec["id"])
	person.do("POST", path2, `{"expected":0,"decision":"allow","arguments":{"command":7}}`).
		wantProblem(t, "edit of a now-shell tool without a command line", http.StatusBadRequest, "InvalidRequest", "arguments.command")
	person.do("POST", path2, `{"expected":0,"decision":"allow","arguments":{"command":"ls | wc -l"}}`).want(t, "edit to ls | wc -l", http.StatusOK)
	got := main.get(str(rec["id"]))
	if sub := jsonString(got["subject"]); sub != shellSub("ls | wc -l") || len(stagesOf(got)) != 2 || str(got["status"]) != "approved" {
		t.Errorf("after the edit: subject %s, %d stages, status %s; want shell of the edited command, 2 stages, approved",
			sub, len(stagesOf(got)), str(got["status"]))
	}
}
