package domain

import (
	"encoding/json"
	"testing"
	"time"
)

// A shell grant binds the call's arguments other than the command and its
// labels: an added env, another cwd or workdir is another digest; key
// order, blanks and the description are not.
func TestShellArgumentsDigest(t *testing.T) {
	base, ok := ShellArgumentsDigest(json.RawMessage(`{"command":"ls","cwd":"/repo","timeout":5}`))
	if !ok || base == "" {
		t.Fatalf("digest %q, %v", base, ok)
	}
	for args, same := range map[string]bool{
		`{ "timeout": 5, "cwd": "/repo", "command": "rm -rf /" }`:                      true,
		`{"command":"ls","cwd":"/repo","timeout":5,"description":"List"}`:              true,
		`{"command":"ls","cwd":"/repo","timeout":5,"justification":"why"}`:             true,
		`{"command":"ls","cwd":"/repo","timeout":5,"env":{"LD_PRELOAD":"/x.so"}}`:      false,
		`{"command":"ls","cwd":"/tmp","timeout":5}`:                                    false,
		`{"command":"ls","cwd":"/repo","timeout":5.5}`:                                 false,
		`{"command":"ls","cwd":"/repo","timeout":5,"Command":"x"}`:                     false,
		`{"command":"ls","cwd":"/repo","timeout":5,"with_escalated_permissions":true}`: false,
	} {
		got, ok := ShellArgumentsDigest(json.RawMessage(args))
		if !ok || (got == base) != same {
			t.Errorf("%s: digest %q (%v), same as the base's: %v, want %v", args, got, ok, got == base, same)
		}
	}
	if got, ok := ShellArgumentsDigest(json.RawMessage(`{"command":"ls","description":"d"}`)); !ok || got != "" {
		t.Errorf("only a command and a label: %q, %v, want \"\"", got, ok)
	}
	if _, ok := ShellArgumentsDigest(json.RawMessage(`["ls"]`)); ok {
		t.Error("an argv for arguments: ok, want not")
	}
}

// A shell allow grant covers a stage by its prefix (never an opaque
// stage), or a stage with exact words by those words, and only for the
// same other arguments; a deny grant's prefix covers opaque stages too.
func TestGrantCoversShellStage(t *testing.T) {
	capability := Capability{Action: ActionToolsCall, Target: "Bash"}
	req := func(args string, st Stage) *Request {
		return &Request{Capability: capability, Subject: Subject{Kind: SubjectShell}, Arguments: json.RawMessage(args), Stages: []Stage{st}}
	}
	grant := func(m GrantMatch) *Grant {
		return &Grant{Capability: capability, Scope: ScopeLifetime, Match: &m, CreatedAt: time.Unix(0, 0)}
	}
	envDigest, _ := ShellArgumentsDigest(json.RawMessage(`{"command":"x","env":{"A":"1"}}`))
	ls := Stage{Text: "ls -la", Prefix: []string{"ls"}}
	py := Stage{Text: "python3 -V", Prefix: []string{"python3"}, Opaque: "interpreter", Argv: []string{"python3", "-V"}}
	pyC := Stage{Text: "python3 -c x", Prefix: []string{"python3"}, Opaque: "interpreter", Argv: []string{"python3", "-c", "x"}}
	opaqueLs := Stage{Text: "ls > f", Prefix: []string{"ls"}, Opaque: "redirection"}
	sq := Stage{Text: "sqlite3 db .tables", Prefix: []string{"sqlite3", "db"}, Opaque: "not in the table", Argv: []string{"sqlite3", "db", ".tables"}}
	sqShell := Stage{Text: "sqlite3 db '.shell id'", Prefix: []string{"sqlite3", "db"}, Opaque: "not in the table", Argv: []string{"sqlite3", "db", ".shell id"}}
	deny := func(m GrantMatch) *Grant {
		g := grant(m)
		g.Effect = EffectDeny
		return g
	}
	for _, c := range []struct {
		name  string
		g     *Grant
		r     *Request
		wants bool
	}{
		{"prefix", grant(GrantMatch{ShellPrefix: []string{"ls"}}), req(`{"command":"ls -la"}`, ls), true},
		{"prefix, an env added", grant(GrantMatch{ShellPrefix: []string{"ls"}}), req(`{"command":"ls -la","env":{"A":"1"}}`, ls), false},
		{"prefix, the same env", grant(GrantMatch{ShellPrefix: []string{"ls"}, ArgumentsDigest: envDigest}), req(`{"command":"ls -la","env":{"A":"1"}}`, ls), true},
		{"prefix, env dropped", grant(GrantMatch{ShellPrefix: []string{"ls"}, ArgumentsDigest: envDigest}), req(`{"command":"ls -la"}`, ls), false},
		{"prefix, opaque stage", grant(GrantMatch{ShellPrefix: []string{"ls"}}), req(`{"command":"ls > f"}`, opaqueLs), false},
		{"prefix, interpreter", grant(GrantMatch{ShellPrefix: []string{"python3"}}), req(`{"command":"python3 -V"}`, py), false},
		{"argv, same words", grant(GrantMatch{ShellArgv: []string{"python3", "-V"}}), req(`{"command":"python3 -V"}`, py), true},
		{"argv, other words", grant(GrantMatch{ShellArgv: []string{"python3", "-V"}}), req(`{"command":"python3 -c x"}`, pyC), false},
		{"argv, a prefix stage", grant(GrantMatch{ShellArgv: []string{"ls"}}), req(`{"command":"ls -la"}`, ls), false},
		{"argv, a cwd added", grant(GrantMatch{ShellArgv: []string{"python3", "-V"}}), req(`{"command":"python3 -V","cwd":"/tmp"}`, py), false},
		{"empty match", grant(GrantMatch{}), req(`{"command":"ls -la"}`, ls), false},
		{"argv, a command the table lacks", grant(GrantMatch{ShellArgv: []string{"sqlite3", "db", ".tables"}}), req(`{"command":"sqlite3 db .tables"}`, sq), true},
		{"argv, other words of it", grant(GrantMatch{ShellArgv: []string{"sqlite3", "db", ".tables"}}), req(`{"command":"sqlite3 db '.shell id'"}`, sqShell), false},
		{"prefix, a command the table lacks", grant(GrantMatch{ShellPrefix: []string{"sqlite3", "db"}}), req(`{"command":"sqlite3 db '.shell id'"}`, sqShell), false},
		{"deny prefix, an opaque stage", deny(GrantMatch{ShellPrefix: []string{"ls"}}), req(`{"command":"ls > f"}`, opaqueLs), true},
		{"deny prefix, exact-only stage", deny(GrantMatch{ShellPrefix: []string{"sqlite3", "db"}}), req(`{"command":"sqlite3 db '.shell id'"}`, sqShell), true},
		{"deny argv, other words", deny(GrantMatch{ShellArgv: []string{"sqlite3", "db", ".tables"}}), req(`{"command":"sqlite3 db '.shell id'"}`, sqShell), false},
	} {
		if got := c.g.Covers(c.r, 0); got != c.wants {
			t.Errorf("%s: Covers = %v, want %v", c.name, got, c.wants)
		}
	}
}
