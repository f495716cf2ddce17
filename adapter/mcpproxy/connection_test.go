package mcpproxy_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/adapter"
	"github.com/countersign/countersign/adapter/mcpproxy"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectApp puts a proxy configured as the app connection "mail" (cfg's
// Gate and Session filled in) between up and a real MCP client.
func connectApp(t *testing.T, srvURL string, up *upstream, cfg mcpproxy.Config) (*mcp.ClientSession, *mcpproxy.Proxy) {
	t.Helper()
	ctx := context.Background()
	ut, pt := mcp.NewInMemoryTransports()
	if _, err := up.server.Connect(ctx, ut, nil); err != nil {
		t.Fatal(err)
	}
	gate, err := adapter.New(srvURL, servertest.TokenMain, adapter.WithBackoff(20*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Gate, cfg.Session = gate, "ses-mcp"
	if cfg.Connection == "" {
		cfg.Connection = "mail"
	}
	p, err := mcpproxy.Connect(ctx, pt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	dt, st := mcp.NewInMemoryTransports()
	if _, err := p.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(ctx, dt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, p
}

// answerScoped answers id as the person with a scope.
func answerScoped(t *testing.T, a servertest.API, id domain.RequestID, decision, scope string) {
	t.Helper()
	body := map[string]any{"expected": a.Get(servertest.TokenPerson, id).Revision, "decision": decision, "scope": scope}
	if code, data := a.Do(http.MethodPost, "/v1/requests/"+string(id), servertest.TokenPerson, body); code != http.StatusOK {
		t.Fatalf("answer %s %s: %d %s", decision, id, code, data)
	}
}

var emailArgs = map[string]any{"to": "a@example.com", "body": "Hello."}

// A proxy with a connection submits apps.call:<connection>/<tool> bound to
// {connection, revision}; a lifetime grant for it covers the next identical
// call, in this proxy and in a new proxy of the same upstream (the same
// revision), and not in a proxy of another upstream configuration.
func TestProxyConnectionCallsAreBoundToTheRevision(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	cs, p := connectApp(t, srv.URL, newUpstream(), mcpproxy.Config{Upstream: "mail-server --inbox a"})
	rev := p.Revision()
	if rev == 0 {
		t.Fatal("a proxy with a connection has revision 0")
	}
	ch := callAsync(cs, "send_email", emailArgs)
	r := a.AwaitPending(servertest.TokenPerson, "mail/send_email")
	want := domain.Connection{ID: "mail", Revision: rev}
	if r.Capability != (domain.Capability{Action: domain.ActionAppsCall, Target: "mail/send_email"}) || r.Connection == nil || *r.Connection != want {
		t.Errorf("request capability %+v connection %+v; want apps.call:mail/send_email with %+v", r.Capability, r.Connection, want)
	}
	answerScoped(t, a, r.ID, "allow", domain.ScopeLifetime)
	if got, isErr := text(t, ch); isErr || got != "sent" {
		t.Fatalf("approved call: %q (isError %v)", got, isErr)
	}
	// The grant covers the same call: it runs with nobody asked.
	if got, isErr := text(t, callAsync(cs, "send_email", emailArgs)); isErr || got != "sent" {
		t.Fatalf("call under the lifetime grant: %q (isError %v)", got, isErr)
	}

	// A new proxy of the same upstream: the same revision, the grant holds.
	p.Close()
	up2 := newUpstream()
	cs2, p2 := connectApp(t, srv.URL, up2, mcpproxy.Config{Upstream: "mail-server --inbox a"})
	if p2.Revision() != rev {
		t.Fatalf("revision after a restart %d, want %d", p2.Revision(), rev)
	}
	if got, isErr := text(t, callAsync(cs2, "send_email", emailArgs)); isErr || got != "sent" || len(up2.got("send_email")) != 1 {
		t.Fatalf("call after a restart: %q (isError %v), upstream ran %d times; want it run under the grant", got, isErr, len(up2.got("send_email")))
	}

	// Another upstream configuration, or another connection id, is another revision.
	_, p3 := connectApp(t, srv.URL, newUpstream(), mcpproxy.Config{Upstream: "mail-server --inbox b"})
	_, p4 := connectApp(t, srv.URL, newUpstream(), mcpproxy.Config{Upstream: "mail-server --inbox a", Connection: "mail2"})
	if p3.Revision() == rev || p4.Revision() == rev {
		t.Errorf("revisions %d (other upstream), %d (other id), want both unlike %d", p3.Revision(), p4.Revision(), rev)
	}
}

// When the upstream's tool list changes (a tool added, a schema changed),
// the revision changes and a grant for the old revision covers nothing:
// the same call goes to the person, bound to the new revision.
func TestProxyConnectionToolListChangeNeedsANewDecision(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	up := newUpstream()
	cs, p := connectApp(t, srv.URL, up, mcpproxy.Config{})
	ch := callAsync(cs, "send_email", emailArgs)
	r := a.AwaitPending(servertest.TokenPerson, "mail/send_email")
	answerScoped(t, a, r.ID, "allow", domain.ScopeLifetime)
	if got, isErr := text(t, ch); isErr {
		t.Fatalf("approved call: %q", got)
	}
	changes := []struct {
		name   string
		change func()
	}{
		{"tool added", func() {
			up.add(&mcp.Tool{Name: "archive", InputSchema: map[string]any{"type": "object"}}, "archived")
		}},
		{"schema changed", func() {
			up.add(&mcp.Tool{Name: "send_email", Description: "Send an email.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"}, "bcc": map[string]any{"type": "string"}}}}, "sent")
		}},
	}
	for _, c := range changes {
		old := p.Revision()
		c.change()
		testutil.Eventually(t, 10*time.Second, func() bool { return p.Revision() != old }, c.name+": the revision changes")
		ch := callAsync(cs, "send_email", emailArgs)
		r := a.AwaitPending(servertest.TokenPerson, "mail/send_email")
		if r.Connection == nil || r.Connection.Revision != p.Revision() {
			t.Errorf("%s: request connection %+v, want revision %d", c.name, r.Connection, p.Revision())
		}
		answerScoped(t, a, r.ID, "allow", domain.ScopeLifetime)
		if got, isErr := text(t, ch); isErr {
			t.Fatalf("%s: approved call: %q", c.name, got)
		}
	}
	if n := len(up.got("send_email")); n != 3 {
		t.Errorf("upstream ran send_email %d times, want 3", n)
	}
}

// Read rules on apps.call:<connection>/… make reads; the upstream's
// readOnlyHint still does not.
func TestProxyConnectionReadsByReadRulesOnly(t *testing.T) {
	t.Parallel()
	yaml := strings.Replace(config.DemoYAML, `read_rules: ["tools.call:read_*"]`, `read_rules: ["apps.call:mail/read_*"]`, 1)
	srv := servertest.Start(t, servertest.WithConfig(yaml))
	a := srv.API(t)
	up := newUpstream()
	cs, _ := connectApp(t, srv.URL, up, mcpproxy.Config{})
	if got, isErr := text(t, callAsync(cs, "read_inbox", map[string]any{})); isErr || got != "3 messages" {
		t.Errorf("read_inbox = %q (isError %v), want it run as a read", got, isErr)
	}
	ch := callAsync(cs, "lookup_contact", map[string]any{"to": "a"})
	r := a.AwaitPending(servertest.TokenPerson, "mail/lookup_contact")
	a.Answer(servertest.TokenPerson, r.ID, "deny", "")
	if got, isErr := text(t, ch); !isErr || len(up.got("lookup_contact")) != 0 {
		t.Errorf("lookup_contact = %q (isError %v); want it denied, never run", got, isErr)
	}
}

func TestProxyConnectionMustBeAConfiguredID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, id := range []string{"mail/x", "a b", strings.Repeat("x", 65)} {
		ut, pt := mcp.NewInMemoryTransports()
		if _, err := newUpstream().server.Connect(ctx, ut, nil); err != nil {
			t.Fatal(err)
		}
		gate, _ := adapter.New("http://127.0.0.1:1", servertest.TokenMain)
		p, err := mcpproxy.Connect(ctx, pt, mcpproxy.Config{Gate: gate, Connection: id})
		if !errors.Is(err, mcpproxy.ErrBadConnection) {
			t.Errorf("Connection %q: error %v, want ErrBadConnection", id, err)
		}
		if p != nil {
			p.Close()
		}
	}
}
