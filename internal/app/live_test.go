package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// liveTenant is one tenant with two people, two agents and a token each,
// and an admin service; %s is where a test adds or removes lines.
const liveHead = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}, {id: u-2, policy: {allow: ["*"]}}]
`

const liveAgentsU1 = `    agents: [{id: agt_a, member: u-1}, {id: agt_b, member: u-1}]
`

const liveAgentsU2 = `    agents: [{id: agt_a, member: u-2}, {id: agt_b, member: u-1}]
`

const liveTokens = `    tokens:
      - {token: live-person-1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: live-person-2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: live-a, principal: "agent:agt_a", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: live-admin, principal: "service:admin", scopes: [admin]}
`

// liveDoomed is agt_b's token, which the tests remove.
const liveDoomed = `      - {token: live-b, principal: "agent:agt_b", scopes: [requests:write, approvals:read, approvals:write]}
`

var liveFull = liveHead + liveAgentsU1 + liveTokens + liveDoomed

func writeConfig(t *testing.T, path, yaml string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

func startLive(t *testing.T, yaml string, opts ...servertest.Option) (*servertest.Server, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "countersign.yaml")
	writeConfig(t, path, yaml)
	return servertest.Start(t, append(opts, servertest.WithConfigFile(path))...), path
}

func reload(t *testing.T, a *app.App) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.Reload(ctx)
}

// A token removed from the file stops at once on reload: the next HTTP
// call with it is 401, its bus connection is closed and cannot be made
// again; another agent's connection stays.
func TestReloadRemovedTokenStopsAtOnce(t *testing.T) {
	srv, path := startLive(t, liveFull)
	b := newClient(srv.URL, "live-b")
	if code := b.do(t, "GET", "/v1/requests", nil, nil, nil); code != 200 {
		t.Fatalf("before: live-b gets %d", code)
	}
	agentBRef := domain.Ref{Kind: domain.KindAgent, ID: "agt_b"}
	onBus := mustDial(t, srv, "live-b", acme, agentBRef)
	other := mustDial(t, srv, "live-a", acme, agentA)
	before := srv.App.Config().Revision

	writeConfig(t, path, liveHead+liveAgentsU1+liveTokens)
	if err := reload(t, srv.App); err != nil {
		t.Fatal(err)
	}
	if code := b.do(t, "GET", "/v1/requests", nil, nil, nil); code != 401 {
		t.Fatalf("after reload: live-b gets %d, want 401", code)
	}
	if got := srv.App.Config().Revision; got <= before {
		t.Fatalf("running revision %d, want above %d", got, before)
	}
	testutil.Eventually(t, 5*time.Second, onBus.nc.IsClosed, "live-b's bus connection is still open")
	if _, err := dialBus(srv, "live-b", acme, agentBRef); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("live-b on the bus after reload: %v, want %v", err, nats.ErrAuthorization)
	}
	if other.nc.IsClosed() {
		t.Fatal("the reload closed live-a's connection, whose token stayed")
	}
	if code := newClient(srv.URL, "live-a").do(t, "GET", "/v1/requests", nil, nil, nil); code != 200 {
		t.Fatalf("live-a after reload: %d", code)
	}
}

// A file that does not load changes nothing: the reload fails naming the
// line, the running revision and every token stay, and the failure is
// counted.
func TestReloadBadFileChangesNothing(t *testing.T) {
	srv, path := startLive(t, liveFull)
	before := srv.App.Config()
	failures := metric(t, srv.URL, "countersign_config_reload_failures_total")

	bad := liveHead + `    agents: [{id: agt_a, member: u-9}, {id: agt_b, member: u-1}]
` + liveTokens // agt_a names an unknown member, and live-b is gone
	writeConfig(t, path, bad)
	err := reload(t, srv.App)
	if err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "u-9") {
		t.Fatalf("reload of a bad file: %v, want an error naming line 4 and u-9", err)
	}
	if got := srv.App.Config(); got != before {
		t.Fatalf("running config %+v, want %+v", got, before)
	}
	if got := storedRevision(t, srv.App); got != before.Revision {
		t.Fatalf("bucket config holds revision %d, want %d: a file that does not load was stored", got, before.Revision)
	}
	if code := newClient(srv.URL, "live-b").do(t, "GET", "/v1/requests", nil, nil, nil); code != 200 {
		t.Fatalf("live-b after a bad reload: %d, want 200", code)
	}
	// The file watcher may load the same bad file once more on its own.
	if got := metric(t, srv.URL, "countersign_config_reload_failures_total"); got != failures+1 && got != failures+2 {
		t.Fatalf("countersign_config_reload_failures_total = %v, want %v (or one more, the file watcher's)", got, failures+1)
	}
}

// storedRevision is the latest revision in KV bucket config.
func storedRevision(t *testing.T, a *app.App) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := a.Broker.JS.KeyValue(ctx, kvstate.BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.(interface{ StreamInfo() *jetstream.StreamInfo }).StreamInfo().State.LastSeq
}

// A request pending at a reload keeps its approver; the next request
// follows the new file.
func TestReloadKeepsPendingChain(t *testing.T) {
	srv, path := startLive(t, liveFull)
	a := newClient(srv.URL, "live-a")
	var first record
	if code := a.do(t, "POST", "/v1/requests", refund(1), nil, &first); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	first = awaitApprover(t, a, first.ID)
	if first.Approver.ID != "u-1" {
		t.Fatalf("first request waits on %+v, want person u-1", first.Approver)
	}

	writeConfig(t, path, liveHead+liveAgentsU2+liveTokens+liveDoomed) // agt_a now works for u-2
	if err := reload(t, srv.App); err != nil {
		t.Fatal(err)
	}
	var kept record
	a.do(t, "GET", "/v1/requests/"+first.ID, nil, nil, &kept)
	if kept.Status != "pending" || kept.Approver == nil || kept.Approver.ID != "u-1" || kept.Revision != first.Revision {
		t.Fatalf("after reload the pending request is %s, waiting on %+v at revision %d; want pending on u-1 at %d",
			kept.Status, kept.Approver, kept.Revision, first.Revision)
	}
	var next record
	if code := a.do(t, "POST", "/v1/requests", refund(2), nil, &next); code != 201 {
		t.Fatalf("submit after reload: %d", code)
	}
	if next = awaitApprover(t, a, next.ID); next.Approver.ID != "u-2" {
		t.Fatalf("a request after the reload waits on %+v, want person u-2", next.Approver)
	}
	var answered record
	if code := newClient(srv.URL, "live-person-1").do(t, "POST", "/v1/requests/"+first.ID,
		map[string]any{"expected": first.Revision, "decision": "allow"}, nil, &answered); code != 200 || answered.Status != "approved" {
		t.Fatalf("u-1 answers the request kept for them: %d %s", code, answered.Status)
	}
}

// awaitApprover reads request id until it waits on someone.
func awaitApprover(t *testing.T, c *client, id string) record {
	t.Helper()
	var r record
	testutil.Eventually(t, 10*time.Second, func() bool {
		c.do(t, "GET", "/v1/requests/"+id, nil, nil, &r)
		return r.Approver != nil
	}, "the request waits on nobody")
	return r
}

// GET /v1/config shows the running revision, the file's SHA-256 and when
// it was applied, to admin only, and never a token nor its hash.
func TestConfigEndpointAdminOnly(t *testing.T) {
	srv, _ := startLive(t, liveFull)
	for token, want := range map[string]int{"": 401, "nope": 401, "live-person-1": 403, "live-a": 403} {
		if code := newClient(srv.URL, token).do(t, "GET", "/v1/config", nil, nil, nil); code != want {
			t.Errorf("GET /v1/config with %q: %d, want %d", token, code, want)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v1/config", nil)
	req.Header.Set("Authorization", "Bearer live-admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("admin: %d %s", resp.StatusCode, body)
	}
	sum := sha256.Sum256([]byte(liveFull))
	for _, want := range []string{`"revision":1`, `"sha256":"` + hex.EncodeToString(sum[:]) + `"`, `"applied_at":"`, `"principal":"agent:agt_b"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("GET /v1/config lacks %s: %s", want, body)
		}
	}
	for _, tok := range []string{"live-person-1", "live-person-2", "live-a", "live-b", "live-admin"} {
		if strings.Contains(string(body), tok) || strings.Contains(string(body), domain.HashToken(tok)) {
			t.Errorf("GET /v1/config shows token %s (or its hash): %s", tok, body)
		}
	}
}

// startLiveRole runs one process of roles on an external NATS, from the
// config file at path.
func startLiveRole(t *testing.T, natsURL, path string, roles ...string) *app.App {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATSURL, cfg.Roles, cfg.Replicas = natsURL, roles, 1
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := launch(context.Background(), app.Options{Config: cfg, Listener: ln, ConfigFile: path,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = a.Shutdown(ctx)
	})
	return a
}

// Two processes on one NATS, each with its own copy of the file (as on two
// machines): the same file is stored once; when the first one's copy
// changes (no signal, no call), both switch to the new revision, the second
// through the bucket alone, and both refuse the removed token.
func TestReloadTwoProcessesSwitch(t *testing.T) {
	url := startExternalNATS(t)
	path1, path2 := filepath.Join(t.TempDir(), "countersign.yaml"), filepath.Join(t.TempDir(), "countersign.yaml")
	writeConfig(t, path1, liveFull)
	writeConfig(t, path2, liveFull)
	p1 := startLiveRole(t, url, path1, "api", "deciders")
	p2 := startLiveRole(t, url, path2, "api")
	if got := storedRevision(t, p1); got != 1 {
		t.Fatalf("the same file started twice is stored %d times, want once", got)
	}

	writeConfig(t, path1, liveHead+liveAgentsU1+liveTokens)
	for i, p := range []*app.App{p1, p2} {
		b := newClient("http://"+p.Addr(), "live-b")
		testutil.Eventually(t, 10*time.Second, func() bool { return b.do(t, "GET", "/v1/requests", nil, nil, nil) == 401 },
			"a process still takes the removed token")
		if got := p.Config().Revision; got != 2 {
			t.Errorf("process %d runs revision %d, want 2", i+1, got)
		}
	}
}

// A token kept with other scopes: its bus connections, which hold the
// permissions of the old scopes, are closed; over HTTP the new scopes count
// at once.
func TestReloadChangedScopesCloseBusConnections(t *testing.T) {
	auditLine := func(scopes string) string {
		return `      - {token: live-audit, principal: "service:audit", scopes: [` + scopes + `]}` + "\n"
	}
	srv, path := startLive(t, liveFull+auditLine("events:read"))
	onBus := mustDial(t, srv, "live-audit", acme, audit)
	c := newClient(srv.URL, "live-audit")
	if code := c.do(t, "GET", "/v1/requests", nil, nil, nil); code != 403 {
		t.Fatalf("events:read only lists requests: %d, want 403", code)
	}

	writeConfig(t, path, liveFull+auditLine("approvals:read"))
	if err := reload(t, srv.App); err != nil {
		t.Fatal(err)
	}
	if code := c.do(t, "GET", "/v1/requests", nil, nil, nil); code != 200 {
		t.Fatalf("after the reload gave approvals:read: %d, want 200", code)
	}
	testutil.Eventually(t, 5*time.Second, onBus.nc.IsClosed, "the connection made with events:read is still open")
}

// A quota changed by a reload counts for the next submit: the token that
// spent its burst of 1 gets the new burst of 3 (on a clock that does not
// move, so nothing refills).
func TestReloadChangesQuotas(t *testing.T) {
	quota := func(burst string) string {
		return strings.Replace(liveFull, "  - id: acme\n", "  - id: acme\n    submit_rate: 1\n    submit_burst: "+burst+"\n", 1)
	}
	srv, path := startLive(t, quota("1"), servertest.WithClock(testutil.NewClock(time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC))))
	a := newClient(srv.URL, "live-a")
	for i, want := range []int{201, 429} {
		if code := a.do(t, "POST", "/v1/requests", refund(i), nil, nil); code != want {
			t.Fatalf("submit %d: %d, want %d", i, code, want)
		}
	}
	writeConfig(t, path, quota("3"))
	if err := reload(t, srv.App); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if code := a.do(t, "POST", "/v1/requests", refund(10+i), nil, nil); code != 201 {
			t.Fatalf("submit %d after the reload: %d, want 201", i, code)
		}
	}
}

// A request waiting on an agent keeps its chain when a reload gives that
// agent another parent: passed up, it goes to the parent in its record.
func TestReloadKeepsChainAbove(t *testing.T) {
	chainCfg := func(midParent string) string {
		return `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents:
      - {id: agt_top, member: u-1}
      - {id: agt_top2, member: u-1}
      - {id: agt_mid, member: u-1, parent: ` + midParent + `}
      - {id: agt_low, member: u-1, parent: agt_mid}
    tokens:
      - {token: chain-low, principal: "agent:agt_low", scopes: [requests:write, approvals:read]}
      - {token: chain-mid, principal: "agent:agt_mid", scopes: [approvals:read, approvals:write]}
`
	}
	srv, path := startLive(t, chainCfg("agt_top"))
	low := newClient(srv.URL, "chain-low")
	var r record
	if code := low.do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	if r = awaitApprover(t, low, r.ID); r.Approver.ID != "agt_mid" {
		t.Fatalf("the request waits on %+v, want agt_mid", r.Approver)
	}
	writeConfig(t, path, chainCfg("agt_top2"))
	if err := reload(t, srv.App); err != nil {
		t.Fatal(err)
	}
	var up record
	if code := newClient(srv.URL, "chain-mid").do(t, "POST", "/v1/requests/"+r.ID,
		map[string]any{"expected": r.Revision, "decision": "abstain"}, nil, &up); code != 200 {
		t.Fatalf("agt_mid abstains: %d", code)
	}
	if up.Approver == nil || up.Approver.ID != "agt_top" {
		t.Fatalf("passed up to %+v, want agt_top (the chain in the record), not the new parent", up.Approver)
	}
}

// A subagent registered under an agent that a reload removes stops with
// it: its token is refused over HTTP and its bus connection is closed.
func TestReloadRemovedAgentTakesItsSubagents(t *testing.T) {
	srv, path := startLive(t, config.DemoYAML)
	token, id := registerSubagent(t, srv)
	sub := domain.Ref{Kind: domain.KindAgent, ID: id}
	onBus := mustDial(t, srv, token, "demo", sub)
	c := newClient(srv.URL, token)
	if code := c.do(t, "GET", "/v1/requests", nil, nil, nil); code != 200 {
		t.Fatalf("the subagent before the reload: %d", code)
	}
	withoutProgrammer := `tenants:
  - id: demo
    members: [{id: u-1, policy: {allow: ["*"], deny: []}}]
    agents: [{id: agt_main, member: u-1}]
    tokens:
      - {token: dev-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: dev-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
`
	writeConfig(t, path, withoutProgrammer)
	if err := reload(t, srv.App); err != nil {
		t.Fatal(err)
	}
	if code := c.do(t, "GET", "/v1/requests", nil, nil, nil); code != 401 {
		t.Fatalf("the subagent of a removed agent: %d, want 401", code)
	}
	testutil.Eventually(t, 5*time.Second, onBus.nc.IsClosed, "the subagent's bus connection is still open")
}
