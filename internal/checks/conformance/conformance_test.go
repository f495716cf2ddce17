package conformance_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/internal/testkit/oidctest"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

const tenant = domain.TenantID("acme")

// One tenant: u-1 decides agt_main's requests, u-2 agt_big's; the tokens
// differ in scope and principal kind.
// The inbox signs in with the provider: public_url, issuer, client and
// u-1's email are filled in (conformanceConfig).
const conformanceYAML = `public_url: %s
link_secret_env: CS_CONFORMANCE_LINK_SECRET
oidc: {issuer: %s, client_id: %s, client_secret_env: CS_CONFORMANCE_OIDC_SECRET}
tenants:
  - id: acme
    request_timeout: 1h
    slack_signing_secret_env: CS_CONFORMANCE_SLACK_SECRET
    members:
      - {id: u-1, email: %s, policy: {allow: ["*"]}, slack_user_id: U1}
      - {id: u-2, policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1}
      - {id: agt_big, member: u-2}
    tokens:
      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-reader, principal: "person:u-1", scopes: [approvals:read]}
      - {token: tok-agent, principal: "agent:agt_main", scopes: [requests:write]}
      - {token: tok-agent-rw, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-big, principal: "agent:agt_big", scopes: [requests:write]}
      - {token: tok-u2, principal: "person:u-2", scopes: [requests:write, approvals:read]}
      - {token: tok-audit, principal: "service:audit", scopes: [events:read]}
`

var principals = map[string]domain.Ref{
	"tok-person":   {Kind: domain.KindPerson, ID: "u-1"},
	"tok-reader":   {Kind: domain.KindPerson, ID: "u-1"},
	"tok-agent":    {Kind: domain.KindAgent, ID: "agt_main"},
	"tok-agent-rw": {Kind: domain.KindAgent, ID: "agt_main"},
	"tok-big":      {Kind: domain.KindAgent, ID: "agt_big"},
	"tok-u2":       {Kind: domain.KindPerson, ID: "u-2"},
	"tok-audit":    {Kind: domain.KindService, ID: "audit"},
}

const validTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// tcase is one row: call builds the call afresh for each surface (its own
// pending request where it needs one), want is the outcome every surface
// must give, note (for a success) what the row observes besides.
type tcase struct {
	name string
	call func(t *testing.T) call
	want outcome
	note func(t *testing.T, body []byte) string
}

// TestSurfacesConform runs every row through HTTP, the bus, JSON-RPC,
// decision links and Slack clicks (each where it offers the operation and
// can stand for the caller, at least two) and demands the row's outcome
// from each.
func TestSurfacesConform(t *testing.T) {
	s, browser := start(t)
	f := &fixtures{t: t, api: s.API(t), traces: watchTraces(t, s)}
	f.bigPage(10)
	surfaces := []surface{httpSurface(s), busSurface(t, s, principals), rpcSurface(s),
		linkSurface(browser, s.URL), slackSurface(t, s), inboxSurface(browser, s.URL)}
	for _, tc := range table(f) {
		t.Run(tc.name, func(t *testing.T) {
			ran := 0
			for _, sf := range surfaces {
				got, body, ok := sf.do(t, tc.call(t))
				if !ok {
					continue
				}
				ran++
				if tc.note != nil && body != nil {
					got.Note = tc.note(t, body)
				}
				t.Logf("%s: %+v", sf.name, got)
				if got != tc.want {
					t.Errorf("%s: %+v, want %+v", sf.name, got, tc.want)
				}
			}
			if ran < 2 {
				t.Fatalf("only %d surface(s) offer this row's operation", ran)
			}
		})
	}
}

// start runs the server on a listener of its own, with sign-in at an
// OpenID provider in process, and signs a browser in as u-1.
func start(t *testing.T) (*servertest.Server, *http.Client) {
	idp := oidctest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	idp.AllowRedirect(base + httpapi.CallbackPath)
	t.Setenv("CS_CONFORMANCE_LINK_SECRET", linkSecret)
	t.Setenv("CS_CONFORMANCE_SLACK_SECRET", slackSecret)
	t.Setenv("CS_CONFORMANCE_OIDC_SECRET", oidctest.ClientSecret)
	yaml := fmt.Sprintf(conformanceYAML, base, idp.Issuer, oidctest.ClientID, oidctest.Email)
	s := servertest.Start(t, servertest.WithConfig(yaml), servertest.WithListener(ln))
	if s.URL != base {
		t.Fatalf("the server is at %s, want %s", s.URL, base)
	}
	return s, signedIn(t, base, idp)
}

func table(f *fixtures) []tcase {
	deploy := map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}}
	with := func(tok string, op approvals.Op, body map[string]any) func(*testing.T) call {
		return func(*testing.T) call { return call{op: op, token: tok, body: body} }
	}
	onFresh := func(tok string, op approvals.Op, body func(p pending) map[string]any) func(*testing.T) call {
		return func(t *testing.T) call {
			p := f.pending(t)
			return call{op: op, token: tok, id: p.id, body: body(p)}
		}
	}
	answer := func(d string, rev func(p pending) uint64) func(p pending) map[string]any {
		return func(p pending) map[string]any { return map[string]any{"expected": rev(p), "decision": d} }
	}
	current := func(p pending) uint64 { return p.rev }
	none := func(pending) map[string]any { return nil }
	unknown := string(domain.NewRequestID())
	forbidden := outcome{Status: http.StatusForbidden, Error: "Forbidden"}
	conflict := outcome{Status: http.StatusConflict, Error: "RequestConflict"}
	return []tcase{
		{name: "submit", call: with("tok-agent", approvals.OpSubmit, deploy), want: outcome{Status: http.StatusCreated}},
		{name: "person submits", call: with("tok-u2", approvals.OpSubmit, deploy), want: forbidden},
		{name: "submit without requests:write", call: with("tok-person", approvals.OpSubmit, deploy), want: forbidden},
		{name: "submit with an unknown field", call: with("tok-agent", approvals.OpSubmit,
			map[string]any{"tool": "deploy", "arguments": map[string]any{}, "Tool": "x"}),
			want: outcome{Status: http.StatusBadRequest, Error: "InvalidRequest", Field: "Tool"}},
		{name: "submit with an invalid traceparent", call: withHeader(with("tok-agent", approvals.OpSubmit, deploy), "traceparent", "00-garbage"),
			want: outcome{Status: http.StatusCreated, Note: "traceparent: none"}, note: f.traceOf},
		{name: "submit with a valid traceparent", call: withHeader(with("tok-agent", approvals.OpSubmit, deploy), "traceparent", validTrace),
			want: outcome{Status: http.StatusCreated, Note: "traceparent: " + validTrace}, note: f.traceOf},
		{name: "get", call: onFresh("tok-person", approvals.OpGet, none), want: outcome{Status: http.StatusOK}},
		{name: "requester gets its request", call: onFresh("tok-agent", approvals.OpGet, none), want: outcome{Status: http.StatusOK}},
		{name: "get an unknown request", call: func(*testing.T) call { return call{op: approvals.OpGet, token: "tok-person", id: unknown} },
			want: outcome{Status: http.StatusNotFound, Error: "RequestNotFound"}},
		{name: "list", call: with("tok-person", approvals.OpList, map[string]any{"limit": 1}), want: outcome{Status: http.StatusOK}},
		{name: "list without approvals:read", call: with("tok-agent", approvals.OpList, nil), want: forbidden},
		{name: "list with a bad limit", call: with("tok-person", approvals.OpList, map[string]any{"limit": 0}),
			want: outcome{Status: http.StatusBadRequest, Error: "InvalidRequest", Field: "limit"}},
		{name: "list a page over 4 MiB", call: with("tok-u2", approvals.OpList, map[string]any{"status": "pending"}),
			want: outcome{Status: http.StatusOK, Note: "items: 4, next_cursor: true"}, note: pageNote},
		{name: "answer", call: onFresh("tok-person", approvals.OpAnswer, answer("allow", current)), want: outcome{Status: http.StatusOK}},
		{name: "answer without approvals:write", call: onFresh("tok-reader", approvals.OpAnswer, answer("allow", current)), want: forbidden},
		{name: "agent answers without approvals:write", call: onFresh("tok-agent", approvals.OpAnswer, answer("deny", current)), want: forbidden},
		{name: "agent answers its own request", call: onFresh("tok-agent-rw", approvals.OpAnswer, answer("allow", current)), want: conflict},
		{name: "answer a stale revision", call: onFresh("tok-person", approvals.OpAnswer, answer("allow", func(p pending) uint64 { return p.rev + 5 })), want: conflict},
		{name: "answer an unknown request", call: func(*testing.T) call {
			return call{op: approvals.OpAnswer, token: "tok-person", id: unknown, body: map[string]any{"expected": 1, "decision": "allow"}}
		}, want: outcome{Status: http.StatusNotFound, Error: "RequestNotFound"}},
		{name: "cancel", call: onFresh("tok-agent", approvals.OpCancel, none), want: outcome{Status: http.StatusOK}},
		{name: "person cancels", call: onFresh("tok-u2", approvals.OpCancel, none), want: forbidden},
		{name: "cancel a turn", call: with("tok-agent", approvals.OpCancel, map[string]any{"turn": "turn-1"}), want: outcome{Status: http.StatusOK}},
		{name: "person cancels a turn", call: with("tok-u2", approvals.OpCancel, map[string]any{"turn": "turn-1"}), want: forbidden},
		{name: "claim before approval", call: onFresh("tok-agent", approvals.OpClaim, func(p pending) map[string]any { return map[string]any{"call_digest": p.digest} }),
			want: outcome{Status: http.StatusConflict, Error: "RequestConflict", Reason: "not_approved"}},
		{name: "grants", call: with("tok-person", approvals.OpGrants, nil), want: outcome{Status: http.StatusOK}},
		{name: "grants without approvals:read", call: with("tok-agent", approvals.OpGrants, nil), want: forbidden},
		{name: "revoke an unknown grant", call: func(*testing.T) call {
			return call{op: approvals.OpRevoke, token: "tok-person", id: string(domain.NewGrantID())}
		},
			want: outcome{Status: http.StatusNotFound, Error: "GrantNotFound"}},
	}
}

func withHeader(mk func(*testing.T) call, k, v string) func(*testing.T) call {
	return func(t *testing.T) call {
		c := mk(t)
		c.header = map[string]string{k: v}
		return c
	}
}

// pageNote is what a page shows: how many items, whether it goes on.
func pageNote(t *testing.T, body []byte) string {
	var p struct {
		Items      []json.RawMessage `json:"items"`
		NextCursor string            `json:"next_cursor"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("page: %v", err)
	}
	return fmt.Sprintf("items: %d, next_cursor: %t", len(p.Items), p.NextCursor != "")
}

// fixtures makes the state rows need, through HTTP (arranging, not under
// test), and watches the tenant's events.
type fixtures struct {
	t      *testing.T
	api    servertest.API
	traces *traces
	n      int // makes each pending request's call its own
}

type pending struct {
	id     string
	rev    uint64
	digest string
}

// pending submits a request of agt_main and waits until it waits on u-1.
func (f *fixtures) pending(t *testing.T) pending {
	code, data := f.api.Do(http.MethodPost, "/v1/requests", "tok-agent", map[string]any{"tool": "deploy", "arguments": map[string]any{"n": f.n}})
	f.n++
	if code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, data)
	}
	var r domain.Request
	_ = json.Unmarshal(data, &r)
	testutil.Eventually(t, 10*time.Second, func() bool {
		r = f.api.Get("tok-person", r.ID)
		return r.Approver != nil
	}, "the request waits on u-1")
	return pending{id: string(r.ID), rev: r.Revision, digest: r.CallDigest}
}

// bigPage puts n requests of about 900 KiB each in u-2's inbox: more
// than one page of 4 MiB holds (and, past 8, more than a bus message).
func (f *fixtures) bigPage(n int) {
	blob := strings.Repeat("x", 900<<10)
	for i := range n {
		code, data := f.api.Do(http.MethodPost, "/v1/requests", "tok-big", map[string]any{"tool": "upload", "arguments": map[string]any{"i": i, "blob": blob}})
		if code != http.StatusCreated {
			f.t.Fatalf("submit a large request: %d %.200s", code, data)
		}
	}
	testutil.Eventually(f.t, 10*time.Second, func() bool { return len(f.api.Pending("tok-u2")) > 0 }, "u-2's inbox")
}

// traceOf is the traceparent the created request's first event carries.
func (f *fixtures) traceOf(t *testing.T, body []byte) string {
	var r domain.Request
	_ = json.Unmarshal(body, &r)
	tp, ok := f.traces.of(t, string(r.ID))
	if !ok {
		t.Fatalf("no event of %s", r.ID)
	}
	if tp == "" {
		return "traceparent: none"
	}
	return "traceparent: " + tp
}

// traces holds the ce-traceparent of each subject's first event, as a
// service with events:read sees it on the bus.
type traces struct {
	mu    sync.Mutex
	first map[string]string
}

func watchTraces(t *testing.T, s *servertest.Server) *traces {
	tr := &traces{first: map[string]string{}}
	nc, err := nats.Connect(s.App.Broker.ClientURL(), nats.Token("tok-audit"),
		nats.CustomInboxPrefix(events.InboxPrefix(tenant, principals["tok-audit"])))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	_, err = nc.Subscribe(events.TenantEventsFilter(tenant), func(m *nats.Msg) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if id := m.Header.Get("ce-subject"); id != "" {
			if _, seen := tr.first[id]; !seen {
				tr.first[id] = m.Header.Get("ce-traceparent")
			}
		}
	})
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func (tr *traces) of(t *testing.T, id string) (tp string, ok bool) {
	testutil.Eventually(t, 10*time.Second, func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		tp, ok = tr.first[id]
		return ok
	}, "the event of "+id)
	return tp, ok
}
