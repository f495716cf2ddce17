package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// Shell requests are decided stage by stage (SPEC §8).

// bash submits a Claude Code Bash call as a shell subject in session s.
func (c *client) bash(command, session string) map[string]any {
	c.t.Helper()
	return c.submit(map[string]any{"tool": "Bash", "arguments": map[string]any{"command": command},
		"subject": map[string]any{"kind": "shell", "command": command}, "session": session})
}

func stagesOf(rec map[string]any) []map[string]any { return objects(rec["stages"]) }

// The case: a session allow of `ls` must not let `rm -rf /` through.
func TestAPIShellAllowForLsNeverCoversRm(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)

	ls := main.bash("ls", "s1")
	if str(ls["status"]) != "pending" || len(stagesOf(ls)) != 1 {
		t.Fatalf("ls: %s", jsonString(ls))
	}
	person.answer(ls, "allow", "session").want(t, "allow ls for the session", http.StatusOK)
	grants := grantsOf(t, person, "?effect=allow")
	if len(grants) != 1 || jsonString(obj(grants[0]["match"])["shell_prefix"]) != `["ls"]` {
		t.Fatalf("grants after allowing ls for the session: %s, want one with shell_prefix [ls]", jsonString(grants))
	}
	if rec := main.bash("ls -la", "s1"); str(rec["status"]) != "approved" || by(rec) != "grant/"+str(grants[0]["id"]) {
		t.Errorf("ls -la in s1: %s by %s, want approved by the ls grant", str(rec["status"]), by(rec))
	}
	for _, cmd := range []string{"rm -rf / --no-preserve-root", "ls /etc", "ls && rm -rf /", "ls $(rm -rf /)", "ls > /etc/passwd", "bash -c 'ls'"} {
		if rec := main.bash(cmd, "s1"); str(rec["status"]) != "pending" {
			t.Errorf("%q in s1 after allowing ls: %s by %s, want pending (it reaches a decider)", cmd, str(rec["status"]), by(rec))
		}
	}
	// Bash without a subject is a shell request all the same (SPEC §8).
	bare := main.submit(map[string]any{"tool": "Bash", "arguments": map[string]any{"command": "rm -rf /"}, "session": "s1"})
	if str(bare["status"]) != "pending" {
		t.Errorf("Bash rm -rf / without a subject after allowing ls: %s by %s, want pending", str(bare["status"]), by(bare))
	}
}

// A tool-kind grant of a tool (left by an answer to a tool subject of a
// tool the tenant's shell_tools do not name) never covers a shell request
// of that tool.
func TestAPIShellNotCoveredByToolGrant(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	tool := main.submit(map[string]any{"tool": "mcp__box__run", "arguments": map[string]any{"command": "ls"}, "session": "s1"})
	if sub := jsonString(tool["subject"]); sub != `{"kind":"tool"}` {
		t.Fatalf("a tool no shell_tools names, without a subject: subject %s, want kind tool", sub)
	}
	person.answer(tool, "allow", "session").want(t, "allow mcp__box__run as a tool", http.StatusOK)
	rec := main.submit(map[string]any{"tool": "mcp__box__run", "arguments": map[string]any{"command": "rm -rf /"},
		"subject": map[string]any{"kind": "shell"}, "session": "s1"})
	if str(rec["status"]) != "pending" {
		t.Errorf("shell rm after a tool grant of its tool: %s by %s, want pending", str(rec["status"]), by(rec))
	}
}

// A person answers a staged request stage by stage: each allow but the
// last leaves it pending at the next stage; a deny of any stage denies it.
func TestAPIShellStageByStage(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)

	rec := main.bash("git status && git push origin main | tee log", "s1")
	st := stagesOf(rec)
	if len(st) != 3 || num(rec["current_stage"]) != 0 {
		t.Fatalf("stages: %s", jsonString(rec))
	}
	for i, want := range []string{`["git","status"]`, `["git","push"]`, `["tee","log"]`} {
		if got := jsonString(st[i]["prefix"]); got != want {
			t.Errorf("stage %d prefix %s, want %s", i, got, want)
		}
	}
	person.answer(rec, "allow", "lifetime").want(t, "allow stage 0", http.StatusOK)
	rec = person.get(str(rec["id"]))
	if str(rec["status"]) != "pending" || num(rec["current_stage"]) != 1 || num(rec["revision"]) != 1 {
		t.Fatalf("after allowing stage 0: %s", jsonString(rec))
	}
	if b := obj(stagesOf(rec)[0]["allowed_by"]); str(b["kind"]) != "person" || str(b["id"]) != "u-1" {
		t.Errorf("stage 0 allowed_by %v", b)
	}
	// The stage 0 grant is in force at once: a new `git status` is approved.
	if again := main.bash("git status", "s9"); str(again["status"]) != "approved" {
		t.Errorf("git status after a lifetime allow of its stage: %s", str(again["status"]))
	}
	// An answer at the old revision is stale.
	person.do("POST", "/v1/requests/"+str(rec["id"]), map[string]any{"expected": 0, "decision": "allow"}).
		wantProblem(t, "answer at the old revision", http.StatusConflict, "RequestConflict", "")
	person.answer(rec, "allow", "once").want(t, "allow stage 1", http.StatusOK)
	rec = person.get(str(rec["id"]))
	if num(rec["current_stage"]) != 2 {
		t.Fatalf("after allowing stage 1: %s", jsonString(rec))
	}
	person.answer(rec, "deny", "lifetime", "reason", "no logs here").want(t, "deny stage 2", http.StatusOK)
	rec = person.get(str(rec["id"]))
	if str(rec["status"]) != "denied" || num(rec["current_stage"]) != 2 {
		t.Fatalf("after denying stage 2: %s", jsonString(rec))
	}
	// The lifetime deny of `tee log` denies any later request with that stage.
	if later := main.bash("git status; tee log", "s1"); str(later["status"]) != "denied" {
		t.Errorf("a request with a denied stage: %s by %s, want denied by grant", str(later["status"]), by(later))
	}
}

// Partly covered requests start at the first stage no grant covers.
func TestAPIShellPartlyCovered(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	person.answer(main.bash("npm test", "s1"), "allow", "session").want(t, "allow npm test", http.StatusOK)
	rec := main.bash("npm test && npm publish", "s1")
	if str(rec["status"]) != "pending" || num(rec["current_stage"]) != 1 {
		t.Fatalf("npm test && npm publish: %s", jsonString(rec))
	}
	if b := obj(stagesOf(rec)[0]["allowed_by"]); str(b["kind"]) != "grant" {
		t.Errorf("stage 0 allowed_by %v, want the grant", b)
	}
	person.answer(rec, "allow", "once").want(t, "allow npm publish", http.StatusOK)
	if rec = person.get(str(rec["id"])); str(rec["status"]) != "approved" {
		t.Errorf("after the last stage: %s", str(rec["status"]))
	}
}

// An agent decider holds a stage only by a grant covering it; an opaque
// stage it never holds, so its allow endorses and the request goes up.
func TestAPIShellAgentHoldsStageByGrant(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, prog, person := newClient(t, url, tokMain), newClient(t, url, tokProg), newClient(t, url, tokPerson)
	person.answer(main.bash("make test", ""), "allow", "lifetime").want(t, "main may make test", http.StatusOK)

	rec := prog.bash("make test", "p1")
	main.answer(rec, "allow", "once").want(t, "main allows make test", http.StatusOK)
	if rec = main.get(str(rec["id"])); str(rec["status"]) != "approved" || by(rec) != "agent/agt_main" {
		t.Errorf("make test, allowed by a holder: %s by %s", str(rec["status"]), by(rec))
	}
	rec = prog.bash("make test && $CMD", "p1")
	main.answer(rec, "allow", "once").want(t, "main allows stage 0", http.StatusOK)
	rec = main.get(str(rec["id"]))
	if num(rec["current_stage"]) != 1 || str(obj(rec["approver"])["kind"]) != "agent" {
		t.Fatalf("after main allowed stage 0: %s", jsonString(rec))
	}
	main.answer(rec, "allow", "once").want(t, "main endorses the opaque stage", http.StatusOK)
	rec = main.get(str(rec["id"]))
	if str(rec["status"]) != "pending" || str(obj(rec["approver"])["kind"]) != "person" || len(objects(rec["endorsements"])) != 1 {
		t.Errorf("the opaque stage after main's allow: %s, want pending on the person with main's endorsement", jsonString(rec))
	}
}

// The stages decided are those of the call that runs: a shell subject's
// command must be the command in the arguments.
func TestAPIShellSubjectMustMatchArguments(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	main.do("POST", "/v1/requests", map[string]any{"tool": "Bash", "arguments": map[string]any{"command": "rm -rf /"},
		"subject": map[string]any{"kind": "shell", "command": "ls"}}).
		wantProblem(t, "a subject naming another command", http.StatusBadRequest, "InvalidRequest", "subject")
	main.do("POST", "/v1/requests", map[string]any{"tool": "Bash", "arguments": map[string]any{"cmd": "ls"},
		"subject": map[string]any{"kind": "shell"}}).
		wantProblem(t, "a shell call without a command", http.StatusBadRequest, "InvalidRequest", "arguments.command")
	rec := main.submit(map[string]any{"tool": "shell", "arguments": map[string]any{"command": []string{"bash", "-lc", "ls; id"}},
		"subject": map[string]any{"kind": "shell"}})
	if got := str(obj(rec["subject"])["command"]); got != "ls; id" || len(stagesOf(rec)) != 2 {
		t.Errorf("Codex argv: command %q, stages %s", got, jsonString(rec["stages"]))
	}
}

// A protected write may only be answered once (and, SPEC §8, while a
// client watches its session).
func TestAPIProtectedWriteOnlyOnce(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.submit(map[string]any{"tool": "Write", "arguments": map[string]any{"file_path": ".git/config"},
		"subject": map[string]any{"kind": "tool", "protected_write": true}, "session": "s1"})
	person.answer(rec, "allow", "session").wantProblem(t, "session allow of a protected write", http.StatusBadRequest, "InvalidRequest", "scope")
	watch(t, url, tokPerson, "s1")
	person.answer(rec, "allow", "once").want(t, "allow once", http.StatusOK)
}

// A grant made from an apps.call request binds its connection revision
// (SPEC §8): a new revision never uses an old decision.
func TestAPIConnectionGrantsBindTheRevision(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	call := func(conn map[string]any) map[string]any {
		body := map[string]any{"capability": map[string]any{"action": "apps.call", "target": "conn-1/send_mail"}, "arguments": map[string]any{"to": "a@b"}}
		if conn != nil {
			body["connection"] = conn
		}
		return main.submit(body)
	}
	rev1 := map[string]any{"id": "conn-1", "revision": 1}
	person.answer(call(rev1), "allow", "lifetime").want(t, "allow for lifetime at revision 1", http.StatusOK)
	grants := grantsOf(t, person, "?effect=allow")
	if len(grants) != 1 || jsonString(grants[0]["connection"]) != `{"id":"conn-1","revision":1}` {
		t.Fatalf("grants: %s, want one carrying connection conn-1 revision 1", jsonString(grants))
	}
	if rec := call(rev1); str(rec["status"]) != "approved" {
		t.Errorf("same connection revision: %s, want approved by the grant", str(rec["status"]))
	}
	for name, conn := range map[string]map[string]any{
		"revision 2":    {"id": "conn-1", "revision": 2},
		"no connection": nil,
	} {
		if rec := call(conn); str(rec["status"]) != "pending" {
			t.Errorf("%s: %s by %s, want pending", name, str(rec["status"]), by(rec))
		}
	}
}

// Each stage allowed but the last is one request.updated event at the
// next revision; the last is request.decided.
func TestAPIShellStageEvents(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	ch, _ := openEvents(t, url, tokPerson, "")
	rec := main.bash("make && make install", "")
	id := str(rec["id"])
	if ev := nextAbout(t, ch, id); ev.event != "dev.countersign.request.created" {
		t.Fatalf("first event %s", ev.event)
	}
	person.answer(rec, "allow", "once").want(t, "allow stage 0", http.StatusOK)
	if ev := nextAbout(t, ch, id); ev.event != "dev.countersign.request.updated" || ev.id != id+":1" {
		t.Errorf("after stage 0: %s %s, want dev.countersign.request.updated %s:1", ev.event, ev.id, id)
	}
	person.answer(person.get(id), "allow", "once").want(t, "allow stage 1", http.StatusOK)
	if ev := nextAbout(t, ch, id); ev.event != "dev.countersign.request.decided" || ev.id != id+":2" {
		t.Errorf("after stage 1: %s %s, want dev.countersign.request.decided %s:2", ev.event, ev.id, id)
	}
}

// shellCall submits a shell tool's call whose arguments are args (a
// "command" and whatever else the tool takes) in session s.
func (c *client) shellCall(args map[string]any, session string) map[string]any {
	c.t.Helper()
	return c.submit(map[string]any{"tool": "Bash", "arguments": args,
		"subject": map[string]any{"kind": "shell", "command": args["command"]}, "session": session})
}

// The pairs (SPEC §8, a prefix must not cover code that runs by
// way of an argument): after a person allows the first command for the
// session, the same command is approved by its grant, and the second
// reaches the person.
func TestAPIShellGrantNeverCoversCodeInArguments(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	pairs := []struct{ benign, danger string }{
		{"find . -name x", `find . -exec rm -rf / \;`},
		{"python3 -V", `python3 -c 'import os; os.system("rm -rf ~")'`},
		{"git -C repo status", "git -c core.fsmonitor='rm -rf ~' status"},
		{"awk -F: '{print $1}' f", `awk -F: 'BEGIN{system("rm -rf ~")}'`},
		{"sed -n 1p f", "sed -e '1e rm -rf /' f"},
		{"tar -xzf a.tgz", `tar -xzf a.tgz --to-command='sh -c "rm -rf ~"'`},
		{"git log --oneline", "git log --oneline --output=/home/u/.bashrc"},
	}
	for _, p := range pairs {
		rec := main.bash(p.benign, "s1")
		if str(rec["status"]) != "pending" {
			t.Fatalf("%q before any grant: %s", p.benign, jsonString(rec))
		}
		person.answer(rec, "allow", "session").want(t, "allow "+p.benign+" for the session", http.StatusOK)
		if again := main.bash(p.benign, "s1"); str(again["status"]) != "approved" || str(obj(obj(again["decision"])["by"])["kind"]) != "grant" {
			t.Errorf("%q again: %s by %s, want approved by its grant", p.benign, str(again["status"]), by(again))
		}
	}
	for _, p := range pairs {
		if rec := main.bash(p.danger, "s1"); str(rec["status"]) != "pending" {
			t.Errorf("%q after allowing %q: %s by %s, want pending (it reaches the person)", p.danger, p.benign, str(rec["status"]), by(rec))
		}
	}
	var argv string
	for _, g := range grantsOf(t, person, "?effect=allow") {
		if m := obj(g["match"]); m["shell_argv"] != nil {
			argv += jsonString(m["shell_argv"])
		}
	}
	if argv != `["python3","-V"]["awk","-F:","{print $1}","f"]` {
		t.Errorf("the interpreters' grants match shell_argv %s, want their exact words", argv)
	}
}

// The grant of a shell call binds its other arguments (SPEC §8): an added
// env or another cwd is not covered; a description, which only labels the
// call, changes nothing.
func TestAPIShellGrantBindsOtherArguments(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	granted := map[string]any{"command": "ls -la", "cwd": "/repo", "description": "List the files"}
	person.answer(main.shellCall(granted, "s1"), "allow", "session").want(t, "allow ls -la in /repo", http.StatusOK)
	grants := grantsOf(t, person, "?effect=allow")
	if len(grants) != 1 || !strings.HasPrefix(str(obj(grants[0]["match"])["arguments_digest"]), "sha256:") {
		t.Errorf("grants: %s, want one binding the arguments' digest", jsonString(grants))
	}
	for name, c := range map[string]struct {
		args map[string]any
		want string
	}{
		"same call":          {map[string]any{"command": "ls -la", "cwd": "/repo", "description": "List the files"}, "approved"},
		"another label":      {map[string]any{"command": "ls", "cwd": "/repo", "description": "Look around"}, "approved"},
		"env added":          {map[string]any{"command": "ls -la", "cwd": "/repo", "env": map[string]any{"LD_PRELOAD": "/tmp/evil.so"}}, "pending"},
		"another cwd":        {map[string]any{"command": "ls -la", "cwd": "/etc"}, "pending"},
		"no cwd":             {map[string]any{"command": "ls -la"}, "pending"},
		"a sandbox turn-off": {map[string]any{"command": "ls -la", "cwd": "/repo", "dangerouslyDisableSandbox": true}, "pending"},
	} {
		if rec := main.shellCall(c.args, "s1"); str(rec["status"]) != c.want {
			t.Errorf("%s: %s by %s, want %s", name, str(rec["status"]), by(rec), c.want)
		}
	}
}
