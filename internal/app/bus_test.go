package app_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// Two tenants on one bus: acme's people, agents and services, and globex.
const busTenants = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}, {id: agt_b, member: u-1}]
    tokens: [{token: acme-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]},
             {token: acme-a, principal: "agent:agt_a", scopes: [requests:write, approvals:read, approvals:write]},
             {token: acme-b, principal: "agent:agt_b", scopes: [requests:write, approvals:read, approvals:write]},
             {token: acme-audit, principal: "service:audit", scopes: [events:read]},
             {token: acme-ops, principal: "service:ops", scopes: [approvals:read]},
             {token: acme-admin, principal: "service:admin", scopes: [admin]}]
  - id: globex
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}]
    tokens: [{token: globex-a, principal: "agent:agt_a", scopes: [requests:write]},
             {token: globex-audit, principal: "service:audit", scopes: [events:read]}]
`

var (
	acme      = domain.TenantID("acme")
	globex    = domain.TenantID("globex")
	agentA    = domain.Ref{Kind: domain.KindAgent, ID: "agt_a"}
	agentB    = domain.Ref{Kind: domain.KindAgent, ID: "agt_b"}
	personU1  = domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	audit     = domain.Ref{Kind: domain.KindService, ID: "audit"}
	opsNoRead = domain.Ref{Kind: domain.KindService, ID: "ops"}
	admin     = domain.Ref{Kind: domain.KindService, ID: "admin"}
)

// busClient is a real nats.go client on the embedded server's client port;
// errs receives its asynchronous errors (permission violations).
type busClient struct {
	nc   *nats.Conn
	errs chan error
}

func startBus(t *testing.T) *servertest.Server {
	t.Helper()
	srv := servertest.Start(t, servertest.WithConfig(busTenants))
	if srv.App.Broker.ClientURL() == "" {
		t.Fatal("embedded server has no client URL")
	}
	return srv
}

func dialBus(srv *servertest.Server, token string, tenant domain.TenantID, p domain.Ref) (*busClient, error) {
	return dialURL(srv.App.Broker.ClientURL(), token, tenant, p)
}

func dialURL(url, token string, tenant domain.TenantID, p domain.Ref) (*busClient, error) {
	c := &busClient{errs: make(chan error, 16)}
	nc, err := nats.Connect(url, nats.Token(token), nats.MaxReconnects(0),
		nats.CustomInboxPrefix(events.InboxPrefix(tenant, p)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { c.errs <- err }))
	if err != nil {
		return nil, err
	}
	c.nc = nc
	return c, nil
}

func mustDial(t *testing.T, srv *servertest.Server, token string, tenant domain.TenantID, p domain.Ref) *busClient {
	t.Helper()
	return mustDialURL(t, srv.App.Broker.ClientURL(), token, tenant, p)
}

func mustDialURL(t *testing.T, url, token string, tenant domain.TenantID, p domain.Ref) *busClient {
	t.Helper()
	c, err := dialURL(url, token, tenant, p)
	if err != nil {
		t.Fatalf("connect with %s: %v", token, err)
	}
	t.Cleanup(c.nc.Close)
	return c
}

// violation waits for the server's "Permissions Violation for <op> to
// "<subject>"" on c.
func (c *busClient) violation(t *testing.T, op, subject string) {
	t.Helper()
	want := `Permissions Violation for ` + op + ` to "` + subject + `"`
	timeout := time.After(5 * time.Second)
	for {
		select {
		case err := <-c.errs:
			if strings.Contains(err.Error(), want) {
				return
			}
		case <-timeout:
			t.Fatalf("no %q", want)
		}
	}
}

func (c *busClient) refusedSub(t *testing.T, subject string) {
	t.Helper()
	if _, err := c.nc.SubscribeSync(subject); err != nil {
		t.Fatalf("subscribe %s: %v", subject, err)
	}
	_ = c.nc.Flush()
	c.violation(t, "Subscription", subject)
}

func (c *busClient) refusedPub(t *testing.T, subject string) {
	t.Helper()
	if err := c.nc.Publish(subject, []byte("{}")); err != nil {
		t.Fatalf("publish %s: %v", subject, err)
	}
	_ = c.nc.Flush()
	c.violation(t, "Publish", subject)
}

// clean asserts that no violation arrived: it publishes to a subject no
// token may use and expects that violation to be the first error, since
// the server answers in order and nats.go reports async errors in order.
func (c *busClient) clean(t *testing.T) {
	t.Helper()
	const sentinel = "countersign_sentinel"
	if err := c.nc.Publish(sentinel, nil); err != nil {
		t.Fatal(err)
	}
	_ = c.nc.Flush()
	select {
	case err := <-c.errs:
		if !strings.Contains(err.Error(), `"`+sentinel+`"`) {
			t.Fatalf("unexpected async error: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no violation for the sentinel publish")
	}
}

func TestBusWrongTokenRefusedAtConnect(t *testing.T) {
	srv := startBus(t)
	for _, tok := range []string{"", "nope", "acme-a "} {
		if _, err := dialBus(srv, tok, acme, agentA); !errors.Is(err, nats.ErrAuthorization) {
			t.Errorf("token %q: %v, want %v", tok, err, nats.ErrAuthorization)
		}
	}
	// Guessing the internal user's password does not work either.
	_, err := nats.Connect(srv.App.Broker.ClientURL(), nats.UserInfo("countersign", "countersign"), nats.MaxReconnects(0))
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("internal user with a guessed password: %v, want %v", err, nats.ErrAuthorization)
	}
}

// A token reaches what SPEC §9 gives it: the tenant's API with replies to
// its own inbox, and for an agent its review subject in a queue group,
// answering an offer.
func TestBusTokenReachesItsOwn(t *testing.T) {
	srv := startBus(t)
	internal := srv.App.Broker.Conn
	api, err := internal.Subscribe("countersign.acme.api.ping", func(m *nats.Msg) { _ = m.Respond([]byte("pong")) })
	if err != nil {
		t.Fatal(err)
	}
	defer api.Unsubscribe()
	_ = internal.Flush()
	a := mustDial(t, srv, "acme-a", acme, agentA)
	if m, err := a.nc.Request("countersign.acme.api.ping", nil, 5*time.Second); err != nil || string(m.Data) != "pong" {
		t.Fatalf("api request: %v", err)
	}
	if _, err := a.nc.QueueSubscribe(events.ReviewSubject(acme, "agt_a"), "runtime", func(m *nats.Msg) { _ = m.Respond(nil) }); err != nil {
		t.Fatal(err)
	}
	_ = a.nc.Flush()
	if _, err := internal.Request(events.ReviewSubject(acme, "agt_a"), []byte("offer"), 5*time.Second); err != nil {
		t.Fatalf("offer not taken: %v", err)
	}
	a.clean(t)
}

func TestBusOtherTenantUnreachable(t *testing.T) {
	srv := startBus(t)
	a := mustDial(t, srv, "acme-a", acme, agentA)
	a.refusedPub(t, "countersign.globex.api.submit")
	a.refusedSub(t, "countersign.globex.api.>")
	a.refusedSub(t, events.ReviewSubject(globex, "agt_a"))
	audit := mustDial(t, srv, "acme-audit", acme, audit)
	audit.refusedSub(t, events.TenantEventsFilter(globex))
	audit.refusedSub(t, events.EventsFilter)
}

func TestBusKVUnreachable(t *testing.T) {
	srv := startBus(t)
	mustDial(t, srv, "acme-a", acme, agentA).refusedSub(t, "$KV.>")
	mustDial(t, srv, "acme-person", acme, personU1).refusedPub(t, "$KV.requests.acme.x")
}

func TestBusJetStreamAPIUnreachable(t *testing.T) {
	srv := startBus(t)
	a := mustDial(t, srv, "acme-a", acme, agentA)
	a.refusedSub(t, "$JS.API.>")
	a.refusedPub(t, "$JS.API.STREAM.INFO.KV_requests")
	a.refusedSub(t, "$SYS.>")
}

// Discovery ($SRV: nats micro ls, info, stats) shows server-wide figures,
// so only a token with scope admin reaches it (SPEC §9): any other token's
// publish there is refused by the server and never reaches countersign.
// An admin's stats are the service's, across tenants: acme's admin sees
// globex's get counted, never globex's name or data.
func TestBusDiscoveryOnlyForAdmin(t *testing.T) {
	srv := startBus(t)
	control := []string{"$SRV.PING", "$SRV.INFO", "$SRV.STATS", "$SRV.PING." + events.BusService,
		"$SRV.INFO." + events.BusService, "$SRV.STATS." + events.BusService, "$SRV.STATS." + events.BusService + ".x"}
	for _, c := range []struct {
		token  string
		tenant domain.TenantID
		p      domain.Ref
	}{{"acme-a", acme, agentA}, {"acme-person", acme, personU1}, {"acme-audit", acme, audit}, {"acme-ops", acme, opsNoRead}, {"globex-a", globex, agentA}} {
		cl := mustDial(t, srv, c.token, c.tenant, c.p)
		for _, s := range control {
			cl.refusedPub(t, s)
		}
	}
	g := mustDial(t, srv, "globex-a", globex, agentA)
	msg := nats.NewMsg(events.APISubject(globex, "get"))
	msg.Header.Set("Authorization", "Bearer globex-a")
	msg.Data = []byte(`{"id":"req_globex_secret"}`)
	if _, err := g.nc.RequestMsg(msg, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	a := mustDial(t, srv, "acme-admin", acme, admin)
	for _, s := range control[:3] {
		if _, err := a.nc.RequestMsg(adminAsks(s, ""), 5*time.Second); err != nil {
			t.Fatalf("admin %s: %v", s, err)
		}
	}
	reply, err := a.nc.RequestMsg(adminAsks("$SRV.STATS."+events.BusService, ""), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	a.clean(t)
	var stats micro.Stats
	if err := json.Unmarshal(reply.Data, &stats); err != nil {
		t.Fatal(err)
	}
	// The figures are server-wide (globex's get may be counted), but
	// nothing of globex's own shows. (Whether its get is counted yet is
	// not asserted: a clean-clone run under load saw 0.)
	if len(stats.Endpoints) == 0 {
		t.Fatalf("stats %s: no endpoints", reply.Data)
	}
	if body := string(reply.Data); strings.Contains(body, "globex") || strings.Contains(body, "secret") {
		t.Fatalf("stats %s: want nothing of globex's", body)
	}
}

// An agent replies to an offer it receives once (NATS allow_responses,
// one message): a second reply to the same offer is refused by the server,
// so an agent cannot flood countersign's reply inbox.
func TestBusSecondReplyToAnOfferRefused(t *testing.T) {
	srv := startBus(t)
	secondReplyRefused(t, srv.App.Broker.Conn, mustDial(t, srv, "acme-b", acme, agentB), events.ReviewSubject(acme, "agt_b"))
}

// secondReplyRefused offers a review on subject from countersign's own
// connection internal to agent c, which replies twice and then publishes
// a sentinel: the server takes the first reply and refuses the second, and
// c's first asynchronous error is that refusal (the server handles one
// connection's messages in order, and nats.go reports its errors in order).
// Once it is in, a flush of internal has delivered every reply let through:
// exactly one.
func secondReplyRefused(t *testing.T, internal *nats.Conn, c *busClient, subject string) {
	t.Helper()
	offers, err := c.nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	inbox := internal.NewRespInbox()
	replies, err := internal.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := internal.PublishRequest(subject, inbox, []byte("offer")); err != nil {
		t.Fatal(err)
	}
	offer, err := offers.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("no offer: %v", err)
	}
	for _, body := range []string{"", "again"} {
		if err := offer.Respond([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	const sentinel = "countersign_sentinel"
	if err := c.nc.Publish(sentinel, nil); err != nil {
		t.Fatal(err)
	}
	_ = c.nc.Flush()
	for _, subj := range []string{inbox, sentinel} {
		select {
		case err := <-c.errs:
			if want := `Permissions Violation for Publish to "` + subj + `"`; !strings.Contains(err.Error(), want) {
				t.Fatalf("async error %q, want %q", err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no refusal of a publish to %s", subj)
		}
	}
	if err := internal.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := replies.Pending(); n != 1 {
		t.Fatalf("countersign's reply inbox received %d replies, want 1", n)
	}
}

func TestBusWorkStreamUnreachable(t *testing.T) {
	srv := startBus(t)
	a := mustDial(t, srv, "acme-a", acme, agentA)
	a.refusedSub(t, "countersign.acme.decide.>")
	a.refusedSub(t, events.DecideSubject(acme, agentA))
	a.refusedPub(t, events.DecideSubject(acme, agentA))
}

func TestBusOtherInboxUnreachable(t *testing.T) {
	srv := startBus(t)
	a := mustDial(t, srv, "acme-a", acme, agentA)
	a.refusedSub(t, "_INBOX.>")
	a.refusedSub(t, events.InboxFilter(acme, agentB))
	a.refusedSub(t, events.InboxFilter(globex, agentA))
	// nats.go's default inbox is under _INBOX.<nuid>: refused too.
	plain, err := nats.Connect(srv.App.Broker.ClientURL(), nats.Token("acme-a"), nats.MaxReconnects(0),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Request("countersign.acme.api.ping", nil, time.Second); err == nil {
		t.Fatal("a request with the default inbox got a reply")
	}
}

func TestBusOtherAgentsReviewUnreachable(t *testing.T) {
	srv := startBus(t)
	a := mustDial(t, srv, "acme-a", acme, agentA)
	a.refusedSub(t, events.ReviewSubject(acme, "agt_b"))
	a.refusedSub(t, "countersign.acme.review.>")
	mustDial(t, srv, "acme-person", acme, personU1).refusedSub(t, events.ReviewSubject(acme, "agt_a"))
}

// Events are for service: principals with events:read only.
func TestBusEventsOnlyForReadingServices(t *testing.T) {
	srv := startBus(t)
	filter := events.TenantEventsFilter(acme)
	mustDial(t, srv, "acme-person", acme, personU1).refusedSub(t, filter)
	mustDial(t, srv, "acme-a", acme, agentA).refusedSub(t, filter)
	mustDial(t, srv, "acme-ops", acme, opsNoRead).refusedSub(t, filter)

	svc := mustDial(t, srv, "acme-audit", acme, audit)
	sub, err := svc.nc.SubscribeSync(filter)
	if err != nil {
		t.Fatal(err)
	}
	svc.clean(t)
	subject := events.EventSubject(acme, events.TypeRequestCreated)
	if err := srv.App.Broker.Conn.Publish(subject, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil || m.Subject != subject {
		t.Fatalf("event not received: %v", err)
	}
}

// A registered subagent's token lives in the agents bucket: it connects
// once registered; when the subagent is retired its live connection is
// closed and the token is refused at connect.
func TestBusRetiredAgentTokenRefused(t *testing.T) {
	srv := servertest.Start(t)
	token, id := registerSubagent(t, srv)
	sub := domain.Ref{Kind: domain.KindAgent, ID: id}
	live := mustDial(t, srv, token, "demo", sub)
	other := mustDial(t, srv, servertest.TokenProgrammer, "demo", domain.Ref{Kind: domain.KindAgent, ID: "agt_programmer"})

	if code := newClient(srv.URL, servertest.TokenPerson).do(t, "DELETE", "/v1/agents/"+id, nil, nil, nil); code != 200 {
		t.Fatalf("retire: %d", code)
	}
	testutil.Eventually(t, 5*time.Second, live.nc.IsClosed, "the retired agent's connection is still open")
	if _, err := dialBus(srv, token, "demo", sub); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("retired subagent token: %v, want %v", err, nats.ErrAuthorization)
	}
	if other.nc.IsClosed() {
		t.Fatal("retiring one agent closed another agent's connection")
	}
}

// registerSubagent has agt_programmer spawn a subagent, approved by the
// chain, and returns its token and id.
func registerSubagent(t *testing.T, srv *servertest.Server) (token, id string) {
	t.Helper()
	prog := newClient(srv.URL, servertest.TokenProgrammer)
	var rec record
	prog.do(t, "POST", "/v1/requests", map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{}}, nil, &rec)
	for _, tok := range []string{servertest.TokenMain, servertest.TokenPerson} {
		if code := newClient(srv.URL, tok).do(t, "POST", "/v1/requests/"+rec.ID, map[string]any{"expected": rec.Revision, "decision": "allow"}, nil, &rec); code != 200 {
			t.Fatalf("%s allows the spawn: %d", tok, code)
		}
	}
	var out struct {
		Agent struct{ ID string }
		Token string
	}
	if code := prog.do(t, "POST", "/v1/agents", map[string]any{"request_id": rec.ID}, nil, &out); code != 201 {
		t.Fatalf("register: %d", code)
	}
	return out.Token, out.Agent.ID
}

// The bus API answers a token's connection in its own inbox: the
// permissions and the micro service fit together.
func TestBusAPIThroughTokenConnection(t *testing.T) {
	srv := servertest.Start(t)
	c := mustDial(t, srv, servertest.TokenProgrammer, "demo", domain.Ref{Kind: domain.KindAgent, ID: "agt_programmer"})
	msg := nats.NewMsg(events.APISubject("demo", events.OpSubmit))
	msg.Header.Set("Authorization", "Bearer "+servertest.TokenProgrammer)
	msg.Data = []byte(`{"tool":"read_file","arguments":{"path":"README.md"}}`)
	reply, err := c.nc.RequestMsg(msg, 10*time.Second)
	if err != nil {
		t.Fatalf("submit over the bus: %v", err)
	}
	if got := reply.Header.Get("Status"); got != "201" && got != "200" {
		t.Fatalf("submit reply: status %q, error %q: %s", got, reply.Header.Get("Nats-Service-Error"), reply.Data)
	}
	c.clean(t)
}

// The bus API answers only into the caller's own inbox (SPEC §9): a token
// that names another principal's inbox, countersign's own offers inbox or
// any other subject as its reply subject gets nothing published there at
// all, and its message changes nothing. An unauthenticated message is
// known only by its subject's tenant: its 401 goes only into an inbox of
// that tenant, never to a review subject or countersign's own inbox.
func TestBusAPIRepliesOnlyToOwnInbox(t *testing.T) {
	srv := servertest.Start(t)
	prog := mustDial(t, srv, servertest.TokenProgrammer, "demo", domain.Ref{Kind: domain.KindAgent, ID: "agt_programmer"})
	mainRef := domain.Ref{Kind: domain.KindAgent, ID: "agt_main"}
	victim := mustDial(t, srv, servertest.TokenMain, "demo", mainRef)
	victimInbox, err := victim.nc.SubscribeSync(events.InboxFilter("demo", mainRef))
	if err != nil {
		t.Fatal(err)
	}
	victimReview, err := victim.nc.SubscribeSync(events.ReviewSubject("demo", "agt_main"))
	if err != nil {
		t.Fatal(err)
	}
	offers, err := prog.nc.SubscribeSync(events.ReviewSubject("demo", "agt_programmer"))
	if err != nil {
		t.Fatal(err)
	}
	victim.clean(t)
	prog.clean(t)

	// agt_sub's request waits on agt_programmer: countersign offers it the
	// review with a reply subject in countersign's own inbox.
	var r record
	if code := newClient(srv.URL, servertest.TokenSub).do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 || r.Status != "pending" {
		t.Fatalf("submit: %d %+v", code, r)
	}
	offer, err := offers.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no offer: %v", err)
	}
	offersInbox, err := srv.App.Broker.Conn.SubscribeSync(offer.Reply)
	if err != nil {
		t.Fatal(err)
	}
	_ = srv.App.Broker.Conn.Flush()
	var mine []any
	newClient(srv.URL, servertest.TokenProgrammer).do(t, "GET", "/v1/requests", nil, nil, &struct{ Items *[]any }{&mine})
	before := len(mine)

	send := func(op, token, reply string, body any) {
		t.Helper()
		m := nats.NewMsg(events.APISubject("demo", op))
		if token != "" {
			m.Header.Set("Authorization", "Bearer "+token)
		}
		m.Data, _ = json.Marshal(body)
		m.Reply = reply
		if err := prog.nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	tok := servertest.TokenProgrammer
	send(events.OpAnswer, tok, offer.Reply, map[string]any{"id": r.ID, "expected": r.Revision, "decision": "allow"})
	send(events.OpSubmit, tok, events.InboxPrefix("demo", mainRef)+".spoofed", refund(2))
	send(events.OpGet, tok, events.ReviewSubject("demo", "agt_main"), map[string]any{"id": r.ID})
	send(events.OpGet, "", offer.Reply, map[string]any{"id": r.ID})
	send(events.OpList, "", events.ReviewSubject("demo", "agt_main"), nil)
	prog.clean(t)

	subs := map[string]*nats.Subscription{"the victim's inbox": victimInbox, "the victim's review subject": victimReview, "the offers inbox": offersInbox}
	dropped := []string{`countersign_bus_requests_total{code="403",op="answer"} 1`, `countersign_bus_requests_total{code="403",op="submit"} 1`,
		`countersign_bus_requests_total{code="403",op="get"} 1`, `countersign_bus_requests_total{code="401",op="get"} 1`,
		`countersign_bus_requests_total{code="401",op="list"} 1`}
	received := func() bool {
		for _, s := range subs {
			if n, _, _ := s.Pending(); n > 0 {
				return true
			}
		}
		return false
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		m := metricsText(t, srv.URL)
		for _, d := range dropped {
			if !strings.Contains(m, d) {
				return received()
			}
		}
		return true
	}, "the spoofed messages to be dropped")
	for what, s := range subs {
		if m, err := s.NextMsg(100 * time.Millisecond); err == nil {
			t.Errorf("%s received a reply: %v %s", what, m.Header, m.Data)
		}
	}
	var got record
	newClient(srv.URL, servertest.TokenPerson).do(t, "GET", "/v1/requests/"+r.ID, nil, nil, &got)
	if got.Status != "pending" || got.Revision != r.Revision {
		t.Errorf("the spoofed answer changed the request: %+v", got)
	}
	newClient(srv.URL, servertest.TokenProgrammer).do(t, "GET", "/v1/requests", nil, nil, &struct{ Items *[]any }{&mine})
	if len(mine) != before {
		t.Errorf("the spoofed submit created a request: %d, then %d", before, len(mine))
	}

	// The same token is answered in its own inbox, and so is an
	// unauthenticated get with a reply there, with a 401 (SPEC §9: never
	// silence): the get subscription takes both in order, so the 401
	// arrives before the token's answer.
	own, err := prog.nc.SubscribeSync(events.InboxFilter("demo", domain.Ref{Kind: domain.KindAgent, ID: "agt_programmer"}))
	if err != nil {
		t.Fatal(err)
	}
	send(events.OpGet, "", prog.nc.NewRespInbox(), map[string]any{"id": r.ID})
	m := nats.NewMsg(events.APISubject("demo", events.OpGet))
	m.Data = []byte(`{"id":"` + r.ID + `"}`)
	m.Header.Set("Authorization", "Bearer "+tok)
	if reply, err := prog.nc.RequestMsg(m, 10*time.Second); err != nil || reply.Header.Get("Status") != "200" {
		t.Fatalf("get in its own inbox: %v %v", err, reply)
	}
	if first, err := own.NextMsg(0); err != nil || first.Header.Get(micro.ErrorCodeHeader) != "401" || first.Header.Get(micro.ErrorHeader) != "Unauthenticated" {
		t.Fatalf("the unauthenticated get in its own inbox: %v %v, want a 401 Unauthenticated first", err, first)
	}
	if second, err := own.NextMsg(0); err != nil || second.Header.Get("Status") != "200" {
		t.Fatalf("the token's get in its own inbox: %v %v", err, second)
	}
}

// adminAsks is a discovery message of acme's admin token: its token in
// Authorization, as on every bus message; reply "" for the requester's own.
func adminAsks(subject, reply string) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Reply = reply
	m.Header.Set("Authorization", "Bearer acme-admin")
	return m
}

// Discovery answers go only into the caller's own inbox (SPEC §9): an
// admin token that names an agent's review subject, countersign's own
// offers inbox, a KV key, a person's inbox of its tenant or an agent's of
// another as the reply of a $SRV.PING gets nothing published there.
// Another tenant's (non-admin) token cannot make a discovery reply land in
// a person's inbox: its $SRV.PING never reaches countersign.
func TestBusDiscoveryRepliesOnlyToTenantInboxes(t *testing.T) {
	srv := startBus(t)
	adm := mustDial(t, srv, "acme-admin", acme, admin)
	victim := mustDial(t, srv, "acme-a", acme, agentA)
	person := mustDial(t, srv, "acme-person", acme, personU1)
	review, err := victim.nc.SubscribeSync(events.ReviewSubject(acme, "agt_a"))
	if err != nil {
		t.Fatal(err)
	}
	personInbox, err := person.nc.SubscribeSync(events.InboxFilter(acme, personU1))
	if err != nil {
		t.Fatal(err)
	}
	internal, err := srv.App.Broker.Conn.SubscribeSync("_INBOX.countersign-internal.1")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := srv.App.Broker.Conn.SubscribeSync("$KV.requests.acme.>")
	if err != nil {
		t.Fatal(err)
	}
	globexAgent, err := srv.App.Broker.Conn.SubscribeSync(events.InboxFilter(globex, agentA))
	if err != nil {
		t.Fatal(err)
	}
	victim.clean(t)
	person.clean(t)
	_ = srv.App.Broker.Conn.Flush()
	for _, reply := range []string{events.ReviewSubject(acme, "agt_a"), "_INBOX.countersign-internal.1", "$KV.requests.acme.req_01JC0000000000000000000000",
		events.InboxPrefix(acme, personU1) + ".forged", events.InboxPrefix(globex, agentA) + ".forged"} {
		if err := adm.nc.PublishMsg(adminAsks("$SRV.PING", reply)); err != nil {
			t.Fatal(err)
		}
	}
	adm.clean(t)
	g := mustDial(t, srv, "globex-a", globex, agentA)
	if err := g.nc.PublishRequest("$SRV.PING", events.InboxPrefix(acme, personU1)+".forged", nil); err != nil {
		t.Fatal(err)
	}
	_ = g.nc.Flush()
	g.violation(t, "Publish", "$SRV.PING")
	// The admin's own inbox still gets the ping answer (nats micro ls). One
	// subscription answers $SRV.PING, in order, on one connection: once
	// this answer is here, the forged ones were published or refused, and a
	// flush of each receiver's connection delivers any it was sent.
	if _, err := adm.nc.RequestMsg(adminAsks("$SRV.PING", ""), 5*time.Second); err != nil {
		t.Fatalf("ping in its own inbox: %v", err)
	}
	for _, nc := range []*nats.Conn{victim.nc, person.nc, srv.App.Broker.Conn} {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for name, sub := range map[string]*nats.Subscription{"the review subject": review, "a person's inbox": personInbox, "an internal inbox": internal, "a KV key": kv, "another tenant's inbox": globexAgent} {
		if n, _, _ := sub.Pending(); n > 0 {
			m, _ := sub.NextMsg(0)
			t.Errorf("%s received %q", name, m.Data)
		}
	}
}
