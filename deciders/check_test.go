package deciders_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/shell"
	"github.com/countersign/countersign/views"
)

const tenantYAML = `tenants:
  - id: acme
    read_rules: ["tools.call:read_*"]
    members:
      - {id: u-1, policy: {allow: ["*"], deny: ["apps.call:*/delete_*"]}}
      - {id: u-2}
    agents:
      - {id: main, member: u-1}
      - {id: prog, member: u-1, parent: main}
      - {id: lone, member: u-2}
`

type fixture struct {
	t       *domain.Tenant
	store   *kvstate.Store
	views   *views.Views
	checker *deciders.Checker
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, views, tenants := testutil.NewState(t, tenantYAML)
	return &fixture{t: tenants[0], store: store, views: views, checker: newChecker(views)}
}

func (f *fixture) grant(t *testing.T, agent domain.AgentID, target, effect, scope, session string) domain.Grant {
	t.Helper()
	g := domain.Grant{ID: domain.NewGrantID(), Tenant: "acme", Agent: agent, Capability: domain.Capability{Action: "tools.call", Target: target},
		Effect: effect, Scope: scope, Session: session, CreatedAt: time.Now()}
	rev, err := f.store.PutGrant(context.Background(), &g)
	if err != nil {
		t.Fatal(err)
	}
	f.views.GrantMirror().Apply(kvstate.GrantKey("acme", g.ID), g, rev)
	return g
}

func req(agent domain.AgentID, action, target, session, kind string) *domain.Request {
	return &domain.Request{Tenant: "acme", Agent: agent, Session: session, Subject: domain.Subject{Kind: kind},
		Capability: domain.Capability{Action: action, Target: target}}
}

func TestCheckOrder(t *testing.T) {
	f := newFixture(t)
	allow := f.grant(t, "prog", "deploy", domain.EffectAllow, domain.ScopeLifetime, "")
	deny := f.grant(t, "prog", "wipe", domain.EffectDeny, domain.ScopeLifetime, "")
	f.grant(t, "prog", "wipe", domain.EffectAllow, domain.ScopeLifetime, "")
	sess := f.grant(t, "prog", "email", domain.EffectAllow, domain.ScopeSession, "ses-1")
	f.grant(t, "prog", "read_secrets", domain.EffectDeny, domain.ScopeLifetime, "")
	tests := []struct {
		name   string
		r      *domain.Request
		status domain.Status
		by     domain.Ref
	}{
		{"policy deny wins", req("prog", "apps.call", "c/delete_user", "", "tool"), domain.StatusDenied, domain.Ref{Kind: "policy", ID: "u-1"}},
		{"no policy denies", req("lone", "tools.call", "read_file", "", "tool"), domain.StatusDenied, domain.Ref{Kind: "policy", ID: "u-2"}},
		{"read", req("prog", "tools.call", "read_file", "", "tool"), domain.StatusApproved, domain.Ref{Kind: "read", ID: "tools.call:read_*"}},
		{"a read is decided before grants", req("prog", "tools.call", "read_secrets", "", "tool"), domain.StatusApproved, domain.Ref{Kind: "read", ID: "tools.call:read_*"}},
		{"allow grant", req("prog", "tools.call", "deploy", "", "tool"), domain.StatusApproved, domain.Ref{Kind: "grant", ID: string(allow.ID)}},
		{"deny grant wins", req("prog", "tools.call", "wipe", "", "tool"), domain.StatusDenied, domain.Ref{Kind: "grant", ID: string(deny.ID)}},
		{"session grant in its session", req("prog", "tools.call", "email", "ses-1", "tool"), domain.StatusApproved, domain.Ref{Kind: "grant", ID: string(sess.ID)}},
		{"session grant, other session", req("prog", "tools.call", "email", "ses-2", "tool"), "", domain.Ref{}},
		{"grants bind only their agent", req("main", "tools.call", "deploy", "", "tool"), "", domain.Ref{}},
		{"unknown subject skips reads", req("prog", "tools.call", "read_file", "", "browser"), "", domain.Ref{}},
		{"unknown subject still meets policy", req("prog", "apps.call", "c/delete_user", "", "browser"), domain.StatusDenied, domain.Ref{Kind: "policy", ID: "u-1"}},
		{"delegation to a configured agent is not own", req("main", "agents.delegate", "prog", "", "tool"), "", domain.Ref{}},
	}
	for _, tt := range tests {
		v := f.checker.Check(context.Background(), f.t, tt.r)
		if v.Decided != (tt.status != "") || v.Status != tt.status || v.By != tt.by {
			t.Errorf("%s: %+v; want decided %v status %q by %+v", tt.name, v, tt.status != "", tt.status, tt.by)
		}
	}
}

func TestOwnSubagentDelegation(t *testing.T) {
	f := newFixture(t)
	sub := domain.Agent{ID: domain.NewAgentID(), Tenant: "acme", Member: "u-1", Parent: "prog", Registered: true}
	f.views.AgentMirror().Apply(kvstate.AgentKey("acme", sub.ID), sub, 1)
	v := f.checker.Check(context.Background(), f.t, req("prog", "agents.delegate", string(sub.ID), "", "tool"))
	if !v.Decided || v.By.Kind != domain.KindOwnSubagent {
		t.Fatalf("delegating to its own subagent: %+v", v)
	}
	if v := f.checker.Check(context.Background(), f.t, req("main", "agents.delegate", string(sub.ID), "", "tool")); v.Decided {
		t.Fatalf("delegating to another agent's subagent decided: %+v", v)
	}
}

func TestHoldsAndChain(t *testing.T) {
	f := newFixture(t)
	f.grant(t, "main", "deploy", domain.EffectAllow, domain.ScopeSession, "ses-1")
	f.grant(t, "main", "refund", domain.EffectAllow, domain.ScopeLifetime, "")
	f.grant(t, "main", "refund2", domain.EffectAllow, domain.ScopeLifetime, "")
	f.grant(t, "main", "refund2", domain.EffectDeny, domain.ScopeLifetime, "")
	mainRef := domain.Ref{Kind: "agent", ID: "main"}
	tests := []struct {
		name  string
		d     domain.Ref
		r     *domain.Request
		holds bool
		scope string
	}{
		{"session grant in session", mainRef, req("prog", "tools.call", "deploy", "ses-1", "tool"), true, "session"},
		{"session grant elsewhere", mainRef, req("prog", "tools.call", "deploy", "ses-9", "tool"), false, ""},
		{"lifetime grant", mainRef, req("prog", "tools.call", "refund", "", "tool"), true, "lifetime"},
		{"own deny grant wins", mainRef, req("prog", "tools.call", "refund2", "", "tool"), false, ""},
		{"a read", mainRef, req("prog", "tools.call", "read_x", "", "tool"), true, "lifetime"},
		{"nothing", mainRef, req("prog", "tools.call", "send", "", "tool"), false, ""},
		{"person by policy", domain.Ref{Kind: "person", ID: "u-1"}, req("prog", "tools.call", "send", "", "tool"), true, "lifetime"},
		{"person's policy deny", domain.Ref{Kind: "person", ID: "u-1"}, req("prog", "apps.call", "c/delete_x", "", "tool"), false, "lifetime"},
	}
	for _, tt := range tests {
		holds, scope := f.checker.Holds(f.t, tt.d, tt.r)
		if holds != tt.holds || (holds && scope != tt.scope) {
			t.Errorf("%s: holds %v scope %q; want %v %q", tt.name, holds, scope, tt.holds, tt.scope)
		}
	}
	if got := deciders.Chain(f.views, "acme", "prog"); len(got) != 2 || got[0] != "main" || got[1] != "prog" {
		t.Errorf("Chain(prog) = %v, want [main prog]", got)
	}
	if got := deciders.Above(f.views, "acme", "prog"); got != mainRef {
		t.Errorf("Above(prog) = %+v", got)
	}
	if got := deciders.Above(f.views, "acme", "main"); got != (domain.Ref{Kind: "person", ID: "u-1"}) {
		t.Errorf("Above(main) = %+v", got)
	}
}

// A read rule covers a shell request only when no stage is opaque: an
// interpreter (even one an exact grant could cover), a wrapper, or a known
// command given an argument that runs code is never a read (SPEC §8).
func TestShellReadRuleNeverCoversCodeInArguments(t *testing.T) {
	f := newFixture(t)
	shellReq := func(cmd string) *domain.Request {
		r := req("prog", "tools.call", "read_shell", "", domain.SubjectShell)
		r.Subject.Command = cmd
		for _, st := range shell.Split(cmd) {
			r.Stages = append(r.Stages, domain.Stage{Text: st.Text, Prefix: st.Prefix, Opaque: st.Opaque, Argv: st.Argv})
		}
		return r
	}
	if v := f.checker.Check(context.Background(), f.t, shellReq("ls -la && find . -name x")); v.By.Kind != domain.KindRead {
		t.Fatalf("ls -la && find . -name x: %+v, want a read", v)
	}
	for _, cmd := range []string{`find . -exec rm -rf / \;`, "python3 -V", "git -c core.fsmonitor=x status", "sed -e '1e id' f",
		"tar -xf a --to-command=sh", "env X=1 ls", "xargs rm", "ls && awk '{print}' f"} {
		if v := f.checker.Check(context.Background(), f.t, shellReq(cmd)); v.Decided {
			t.Errorf("%q: decided %+v, want it to reach a decider", cmd, v)
		}
	}
}

func TestNewCheckerRefusesNoViews(t *testing.T) {
	if _, err := deciders.NewChecker(deciders.CheckerConfig{}); !errors.Is(err, deciders.ErrConfig) {
		t.Errorf("NewChecker without Views: err %v, want ErrConfig", err)
	}
}

// newChecker is the check order over views, without a judge or rules.
func newChecker(views deciders.State) *deciders.Checker {
	c, err := deciders.NewChecker(deciders.CheckerConfig{Views: views})
	if err != nil {
		panic(err) // only a nil views is refused
	}
	return c
}
