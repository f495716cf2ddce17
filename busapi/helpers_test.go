package busapi_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nuid"
)

// Black-box tests of the bus API (SPEC §9) against a real server: real
// nats.go requests on the embedded NATS, compared with the HTTP API of
// the same server.

// Tokens of acmeYAML.
const (
	tokPerson  = "tok-person"  // person:u-1
	tokAdmin   = "tok-admin"   // service:ops, admin
	tokMain    = "tok-main"    // agent:agt_main (member u-1)
	tokProg    = "tok-prog"    // agent:agt_programmer (under agt_main)
	tokNoWrite = "tok-nowrite" // agent:agt_main without requests:write
	tokX       = "tok-x"       // agent:agt_x of tenant globex
)

const acmeYAML = `tenants:
  - id: acme
    request_timeout: 1h
    approval_ttl: 5m
    members:
      - id: u-1
        policy: {allow: ["*"], deny: ["tools.call:drop_*"]}
    agents:
      - {id: agt_main, member: u-1}
      - {id: agt_programmer, member: u-1, parent: agt_main}
    tokens:
      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-admin, principal: "service:ops", scopes: [admin]}
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-prog, principal: "agent:agt_programmer", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-nowrite, principal: "agent:agt_main", scopes: [approvals:read, approvals:write]}
  - id: globex
    members:
      - {id: v-1, policy: {allow: ["*"]}}
    agents:
      - {id: agt_x, member: v-1}
    tokens:
      - {token: tok-x, principal: "agent:agt_x", scopes: [requests:write, approvals:read, approvals:write]}
`

// env is a running server with countersign's own NATS connection, the
// token connections opened so far and an HTTP client.
type env struct {
	t       *testing.T
	srv     *servertest.Server
	nc      *nats.Conn
	http    servertest.API
	clients map[string]*nats.Conn
}

func start(t *testing.T, yaml string) *env {
	t.Helper()
	srv := servertest.Start(t, servertest.WithConfig(yaml))
	js, err := srv.App.Broker.Connect("test-client")
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, srv: srv, nc: js.Conn(), http: srv.API(t), clients: map[string]*nats.Conn{}}
}

// client is the connection of token on the client port, as a program on
// the bus has it: the token as its NATS token, its replies in the token's
// inbox (events.InboxPrefix).
func (e *env) client(token string) *nats.Conn {
	e.t.Helper()
	if nc := e.clients[token]; nc != nil {
		return nc
	}
	c, err := e.srv.App.Service.Authenticate("Bearer "+token, nil)
	if err != nil {
		e.t.Fatalf("token %s: %v", token, err)
	}
	nc, err := nats.Connect(e.srv.App.Broker.ClientURL(), nats.Token(token), nats.MaxReconnects(0),
		nats.CustomInboxPrefix(events.InboxPrefix(c.Tenant.ID, c.Principal)))
	if err != nil {
		e.t.Fatalf("connect as %s: %v", token, err)
	}
	e.t.Cleanup(nc.Close)
	e.clients[token] = nc
	return nc
}

// inbox is a fresh reply subject of token's principal.
func (e *env) inbox(token string) string { return e.client(token).NewRespInbox() }

// reply is one answer of the bus API.
type reply struct {
	status int    // Status, or Nats-Service-Error-Code
	code   string // Nats-Service-Error ("" on success)
	header nats.Header
	raw    []byte
	body   map[string]any
}

// msg builds a request: body (string: as is; nil: empty; else JSON) with
// token (none if "") and extra headers as name, value pairs.
func msg(t *testing.T, subj, token string, body any, headers ...string) *nats.Msg {
	t.Helper()
	m := nats.NewMsg(subj)
	switch b := body.(type) {
	case nil:
	case string:
		m.Data = []byte(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		m.Data = j
	}
	if token != "" {
		m.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		m.Header.Set(headers[i], headers[i+1])
	}
	return m
}

// req sends op of tenant and waits for the reply, as the token of the
// message's Authorization header would: on that token's connection, in
// its inbox. A token of another tenant than the subject's (refused at the
// client port) sends on countersign's own connection, still replying in
// the token's inbox. A message whose token does not authenticate has no
// connection of its own here: see TestUnauthenticatedAnswered401.
func (e *env) req(tenant domain.TenantID, op, token string, body any, headers ...string) reply {
	e.t.Helper()
	m := msg(e.t, events.APISubject(tenant, op), token, body, headers...)
	var resp *nats.Msg
	var err error
	auth := authorization(m.Header)
	c, aerr := e.srv.App.Service.Authenticate(auth, nil)
	switch {
	case aerr != nil:
		e.t.Fatalf("%s: token %q does not authenticate: no answer to wait for", op, auth)
	case c.Tenant.ID != tenant:
		resp, err = e.request(m, events.InboxPrefix(c.Tenant.ID, c.Principal))
	default:
		_, tok, _ := strings.Cut(auth, " ")
		resp, err = e.client(strings.TrimSpace(tok)).RequestMsg(m, 10*time.Second)
	}
	if err != nil {
		e.t.Fatalf("%s: %v", op, err)
	}
	return parse(e.t, resp)
}

// request sends m on countersign's own connection with a reply subject
// below prefix and waits for the reply.
func (e *env) request(m *nats.Msg, prefix string) (*nats.Msg, error) {
	m.Reply = prefix + "." + nuid.Next()
	sub, err := e.nc.SubscribeSync(m.Reply)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := e.nc.PublishMsg(m); err != nil {
		return nil, err
	}
	return sub.NextMsg(10 * time.Second)
}

// authorization is the message's Authorization header, its name in any
// case.
func authorization(h nats.Header) string {
	for k, v := range h {
		if strings.EqualFold(k, "Authorization") && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func parse(t *testing.T, m *nats.Msg) reply {
	t.Helper()
	r := reply{header: m.Header, raw: m.Data, code: m.Header.Get(micro.ErrorHeader)}
	s := m.Header.Get("Status")
	if r.code != "" {
		s = m.Header.Get(micro.ErrorCodeHeader)
	}
	var err error
	if r.status, err = strconv.Atoi(s); err != nil {
		t.Fatalf("reply without a status: %v %s", m.Header, m.Data)
	}
	if bytes.HasPrefix(bytes.TrimSpace(m.Data), []byte("{")) {
		if err := json.Unmarshal(m.Data, &r.body); err != nil {
			t.Fatalf("reply body: %v", err)
		}
	}
	return r
}

// want fails the test unless r succeeded with status.
func (r reply) want(t *testing.T, what string, status int) reply {
	t.Helper()
	if r.status != status || r.code != "" {
		t.Fatalf("%s: status %d %s, want %d; body %s", what, r.status, r.code, status, r.raw)
	}
	return r
}

// wantProblem checks an error reply: micro's headers carry the HTTP
// status and the problem's error, the body is the problem.
func (r reply) wantProblem(t *testing.T, what string, status int, code, field string) {
	t.Helper()
	if r.status != status || r.code != code {
		t.Errorf("%s: %d %q, want %d %q; body %s", what, r.status, r.code, status, code, r.raw)
		return
	}
	if int(r.body["status"].(float64)) != status || r.body["error"] != code {
		t.Errorf("%s: problem %s does not match its headers", what, r.raw)
	}
	if field != "" && r.body["field"] != field {
		t.Errorf("%s: field %v, want %q", what, r.body["field"], field)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
}

// same fails unless the bus reply has the HTTP answer's status and bytes.
func same(t *testing.T, what string, r reply, status int, body []byte) {
	t.Helper()
	if r.status != status || !bytes.Equal(r.raw, body) {
		t.Errorf("%s: bus %d %s\nhttp %d %s", what, r.status, r.raw, status, body)
	}
}

func str(v any) string { s, _ := v.(string); return s }

// httpDo is servertest's HTTP client, for comparing.
func (e *env) httpDo(method, path, token string, body any) (int, []byte) {
	e.t.Helper()
	return e.http.Do(method, path, token, body)
}
