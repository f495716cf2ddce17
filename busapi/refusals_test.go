package busapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// count is how many requests the tenant holds (as its admin sees them).
func (e *env) count() int {
	e.t.Helper()
	r := e.req("acme", "list", tokAdmin, obj{"limit": 500}).want(e.t, "admin list", http.StatusOK)
	items, _ := r.body["items"].([]any)
	return len(items)
}

// TestRefusals: every bad message gets an error reply with the HTTP
// status and problem, and changes nothing.
func TestRefusals(t *testing.T) {
	e := start(t, acmeYAML)
	deploy := obj{"tool": "deploy", "arguments": obj{}}
	pending := e.req("acme", "submit", tokMain, deploy).want(t, "submit", http.StatusCreated)
	id := str(pending.body["id"])
	before := e.count()
	missing := "req_01JC0000000000000000000000"
	cases := []struct {
		name, op, token string
		body            any
		headers         []string
		status          int
		code, field     string
	}{
		{"person submits", "submit", tokPerson, deploy, nil, 403, "Forbidden", ""},
		{"token lacks requests:write", "submit", tokNoWrite, deploy, nil, 403, "Forbidden", ""},
		{"token lacks requests:write cancels", "cancel", tokNoWrite, obj{"id": id}, nil, 403, "Forbidden", ""},
		{"not JSON", "submit", tokMain, "deploy please", nil, 400, "InvalidRequest", "body"},
		{"empty submit", "submit", tokMain, nil, nil, 400, "InvalidRequest", "body"},
		{"unknown field", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}, "bogus": 1}, nil, 400, "InvalidRequest", "bogus"},
		{"duplicate key", "submit", tokMain, `{"tool":"a","tool":"b","arguments":{}}`, nil, 400, "InvalidRequest", "body"},
		{"long idempotency key", "submit", tokMain, deploy, []string{"Idempotency-Key", strings.Repeat("k", 256)}, 400, "InvalidRequest", "Idempotency-Key"},
		{"get without id", "get", tokMain, obj{}, nil, 400, "InvalidRequest", "id"},
		{"get with a bad wait", "get", tokMain, obj{"id": id, "wait": "forever"}, nil, 400, "InvalidRequest", "wait"},
		{"get with an unknown field", "get", tokMain, obj{"id": id, "expected": 1}, nil, 400, "InvalidRequest", "expected"},
		{"list limit as text", "list", tokPerson, obj{"limit": "ten"}, nil, 400, "InvalidRequest", "limit"},
		{"list bad status", "list", tokPerson, obj{"status": "nope"}, nil, 400, "InvalidRequest", "status"},
		{"grants bad effect", "grants", tokPerson, obj{"effect": "maybe"}, nil, 400, "InvalidRequest", "effect"},
		{"answer without expected", "answer", tokPerson, obj{"id": id, "decision": "allow"}, nil, 400, "InvalidRequest", "expected"},
		{"answer without id", "answer", tokPerson, obj{"expected": 0, "decision": "allow"}, nil, 400, "InvalidRequest", "id"},
		{"claim without id", "claim", tokMain, obj{"call_digest": "x"}, nil, 400, "InvalidRequest", "id"},
		{"unknown request", "get", tokMain, obj{"id": missing}, nil, 404, "RequestNotFound", ""},
		{"request of another agent", "get", tokProg, obj{"id": id}, nil, 404, "RequestNotFound", ""},
		{"unknown grant", "revoke", tokPerson, obj{"id": "grt_01JC0000000000000000000000"}, nil, 404, "GrantNotFound", ""},
		{"stale answer", "answer", tokPerson, obj{"id": id, "expected": 7, "decision": "allow"}, nil, 409, "RequestConflict", ""},
		{"answer by the requester, not the approver", "answer", tokMain, obj{"id": id, "expected": 0, "decision": "allow"}, nil, 409, "RequestConflict", ""},
		{"claim of a pending request", "claim", tokMain, obj{"id": id, "call_digest": pending.body["call_digest"]}, nil, 409, "RequestConflict", ""},
		{"too large", "submit", tokMain, `{"tool":"deploy","arguments":{"x":"` + strings.Repeat("a", 1<<20) + `"}}`, nil, 413, "PayloadTooLarge", ""},
	}
	e.req("acme", "get", "", obj{"id": id}, "authorization", "Bearer "+tokMain).want(t, "header name in lower case", http.StatusOK)
	for _, c := range cases {
		e.req("acme", c.op, c.token, c.body, c.headers...).wantProblem(t, c.name, c.status, c.code, c.field)
	}
	if after := e.count(); after != before {
		t.Errorf("refused messages changed the requests: %d, then %d", before, after)
	}
	if got := e.http.Get(tokMain, idOf(id)); got.Revision != 0 || got.Status != "pending" {
		t.Errorf("the pending request changed: %+v", got)
	}
}

// TestProblemsLikeHTTP: a refusal over the bus is byte for byte the
// problem HTTP answers for the same action.
func TestProblemsLikeHTTP(t *testing.T) {
	e := start(t, acmeYAML)
	bad := obj{"tool": "deploy", "arguments": obj{}, "bogus": true}
	code, raw := e.httpDo("POST", "/v1/requests", tokMain, bad)
	same(t, "unknown field", e.req("acme", "submit", tokMain, bad), code, raw)
	code, raw = e.httpDo("POST", "/v1/requests", tokPerson, obj{"tool": "deploy", "arguments": obj{}})
	same(t, "person submits", e.req("acme", "submit", tokPerson, obj{"tool": "deploy", "arguments": obj{}}), code, raw)
	code, raw = e.httpDo("GET", "/v1/requests/req_01JC0000000000000000000000", tokMain, nil)
	same(t, "not found", e.req("acme", "get", tokMain, obj{"id": "req_01JC0000000000000000000000"}), code, raw)
}

// TestOtherTenant: a token of one tenant on another tenant's subject is
// 403, and nothing of that tenant changes.
func TestOtherTenant(t *testing.T) {
	e := start(t, acmeYAML)
	before := e.count()
	e.req("acme", "submit", tokX, obj{"tool": "deploy", "arguments": obj{}}).wantProblem(t, "globex token on acme", 403, "Forbidden", "")
	e.req("acme", "list", tokX, nil).wantProblem(t, "globex token lists acme", 403, "Forbidden", "")
	e.req("nosuch", "list", tokMain, nil).wantProblem(t, "acme token on an unknown tenant", 403, "Forbidden", "")
	e.req("globex", "submit", tokX, obj{"tool": "deploy", "arguments": obj{}}).want(t, "globex token on globex", http.StatusCreated)
	if after := e.count(); after != before {
		t.Errorf("acme requests: %d, then %d", before, after)
	}
}

// TestAnswerNoLongerWaiting: an agent decider answers over the bus; once
// the request has moved past it, its next answer is 409 and changes
// nothing.
func TestAnswerNoLongerWaiting(t *testing.T) {
	e := start(t, acmeYAML)
	sub := e.req("acme", "submit", tokProg, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	if ap, _ := sub.body["approver"].(obj); ap["kind"] != "agent" || ap["id"] != "agt_main" {
		t.Fatalf("approver %v, want agent agt_main", sub.body["approver"])
	}
	id := str(sub.body["id"])
	first := e.req("acme", "answer", tokMain, obj{"id": id, "expected": sub.body["revision"], "decision": "allow"}).want(t, "agent answers", http.StatusOK)
	if ap, _ := first.body["approver"].(obj); ap["kind"] == "agent" && ap["id"] == "agt_main" {
		t.Fatalf("the request still waits on agt_main: %s", first.raw)
	}
	e.req("acme", "answer", tokMain, obj{"id": id, "expected": first.body["revision"], "decision": "deny"}).
		wantProblem(t, "answer after the request moved on", http.StatusConflict, "RequestConflict", "")
	if got := e.http.Get(tokMain, idOf(id)); got.Revision != uint64(first.body["revision"].(float64)) {
		t.Errorf("revision %d after a refused answer, want %v", got.Revision, first.body["revision"])
	}
}

// TestForeignReplySubject: the bus answers only into the caller's own
// inbox. A message whose reply subject is anything else gets nothing
// published at all (no reply is safe to send), counts as 403 in
// countersign_bus_requests_total and changes nothing.
func TestForeignReplySubject(t *testing.T) {
	e := start(t, acmeYAML)
	pending := e.req("acme", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	id := str(pending.body["id"])
	before := e.count()
	main := domain.Ref{Kind: domain.KindAgent, ID: "agt_main"}
	own := events.InboxPrefix("acme", main)
	cases := []struct{ name, op, token, reply string }{
		{"another agent's inbox", "cancel", tokMain, events.InboxPrefix("acme", domain.Ref{Kind: domain.KindAgent, ID: "agt_programmer"}) + ".r"},
		{"a person's inbox", "submit", tokMain, events.InboxPrefix("acme", domain.Ref{Kind: domain.KindPerson, ID: "u-1"}) + ".r"},
		{"its own id in another tenant", "cancel", tokMain, events.InboxPrefix("globex", main) + ".r"},
		{"an id that starts like its own", "cancel", tokMain, own + "x.r"},
		{"the bare prefix", "cancel", tokMain, own},
		{"a wildcard below its prefix", "cancel", tokMain, own + ".>"},
		{"an empty token below its prefix", "cancel", tokMain, own + "..r"},
		{"countersign's own inbox", "cancel", tokMain, e.nc.NewRespInbox()},
		{"an API subject", "submit", tokMain, events.APISubject("acme", "list")},
		{"a review subject", "cancel", tokMain, events.ReviewSubject("acme", "agt_main")},
		{"a KV subject", "cancel", tokMain, "$KV.requests.acme." + id},
	}
	var subs []*nats.Subscription
	for _, c := range cases {
		s, err := e.nc.SubscribeSync(c.reply)
		if strings.Contains(c.reply, "..") {
			s, err = nil, nil // not a subject one can subscribe to
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		subs = append(subs, s)
	}
	_ = e.nc.Flush()
	drops := map[string]int{}
	for _, c := range cases {
		m := msg(t, events.APISubject("acme", c.op), c.token, obj{"id": id})
		if c.op == "submit" {
			m = msg(t, events.APISubject("acme", c.op), c.token, obj{"tool": "deploy", "arguments": obj{}})
		}
		m.Reply = c.reply
		if err := e.nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		drops[c.op]++
	}
	counted := func() bool {
		_, raw := e.httpDo("GET", "/metrics", "", nil)
		for op, n := range drops {
			if !strings.Contains(string(raw), `countersign_bus_requests_total{code="403",op="`+op+`"} `+strconv.Itoa(n)+"\n") {
				return false
			}
		}
		return true
	}
	received := func() bool {
		for _, s := range subs {
			if n, _, _ := s.Pending(); s != nil && n > 0 {
				return true
			}
		}
		return false
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return counted() || received() }, "the messages to be counted as dropped")
	for i, s := range subs {
		if s == nil {
			continue
		}
		if n, _, _ := s.Pending(); n > 0 {
			m, _ := s.NextMsg(0)
			t.Errorf("%s: %s received %v %s", cases[i].name, cases[i].reply, m.Header, m.Data)
		}
	}
	if !counted() {
		t.Errorf("not every dropped message counted as 403: %v", drops)
	}
	if after := e.count(); after != before {
		t.Errorf("dropped messages changed the requests: %d, then %d", before, after)
	}
	if got := e.http.Get(tokMain, idOf(id)); got.Revision != 0 || got.Status != "pending" {
		t.Errorf("the pending request changed: %+v", got)
	}
	e.req("acme", "get", tokMain, obj{"id": id}).want(t, "in its own inbox", http.StatusOK)
}

// TestUnauthenticatedAnswered401: a message without Authorization, or
// whose token does not authenticate, sent on a connection that may publish
// (here agt_main's, and the tenant's admin service's) gets an error reply
// in its inbox with 401 Unauthenticated, shaped as every bus error, never
// silence (SPEC §9); it counts as 401 and changes nothing.
func TestUnauthenticatedAnswered401(t *testing.T) {
	e := start(t, acmeYAML)
	pending := e.req("acme", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	id := str(pending.body["id"])
	before := e.count()
	cases := []struct {
		name, op, sender, token string
		body                    any
		headers                 []string
	}{
		{"no token", "get", tokMain, "", obj{"id": id}, nil},
		{"unknown token", "submit", tokMain, "tok-nobody", obj{"tool": "deploy", "arguments": obj{}}, nil},
		{"not a bearer", "get", tokMain, "", obj{"id": id}, []string{"Authorization", "Basic dG9rLW1haW4="}},
		{"no token, answering", "answer", tokMain, "", obj{"id": id, "expected": 0, "decision": "allow"}, nil},
		{"unknown token, the service account", "list", tokAdmin, "tok-nobody", nil, nil},
		{"no token, the service account", "grants", tokAdmin, "", nil, nil},
	}
	for _, c := range cases {
		m := msg(t, events.APISubject("acme", c.op), c.token, c.body, c.headers...)
		got, err := e.client(c.sender).RequestMsg(m, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: no reply: %v", c.name, err)
		}
		parse(t, got).wantProblem(t, c.name, http.StatusUnauthorized, "Unauthenticated", "")
	}
	counted := func() bool {
		_, raw := e.httpDo("GET", "/metrics", "", nil)
		for _, line := range []string{`{code="401",op="get"} 2`, `{code="401",op="submit"} 1`, `{code="401",op="answer"} 1`,
			`{code="401",op="list"} 1`, `{code="401",op="grants"} 1`} {
			if !strings.Contains(string(raw), "countersign_bus_requests_total"+line+"\n") {
				return false
			}
		}
		return true
	}
	testutil.Eventually(t, 10*time.Second, counted, "the unauthenticated messages to be counted as 401")
	if after := e.count(); after != before {
		t.Errorf("unauthenticated messages changed the requests: %d, then %d", before, after)
	}
	if got := e.http.Get(tokMain, idOf(id)); got.Revision != 0 || got.Status != "pending" {
		t.Errorf("the pending request changed: %+v", got)
	}
}

// TestUnauthenticatedNotAnsweredOutsideTheTenant: a message that does not
// authenticate is known only by its subject's tenant, so its 401 goes
// only into an inbox of that tenant (SPEC §9: no reply from countersign
// outside a caller's inbox prefix): countersign's own connection sending
// one on acme's subject with globex's inbox, or with a subject that is no
// inbox, gets nothing published there.
func TestUnauthenticatedNotAnsweredOutsideTheTenant(t *testing.T) {
	e := start(t, acmeYAML)
	globex := e.client(tokX)
	xRef := domain.Ref{Kind: domain.KindAgent, ID: "agt_x"}
	xInbox, err := globex.SubscribeSync(events.InboxFilter("globex", xRef))
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.nc.SubscribeSync("elsewhere.>")
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []*nats.Conn{globex, e.nc} {
		if err := sub.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for _, reply := range []string{events.InboxPrefix("globex", xRef) + ".x", "elsewhere.x", "_INBOX.acme.x", "_INBOX.acme.agent.agt_main.*"} {
		m := msg(t, events.APISubject("acme", "list"), "", nil)
		m.Reply = reply
		if err := e.nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	// The same subscription then answers a message into acme's inbox, in
	// order: any reply to the ones above was published before it.
	if _, err := e.request(msg(t, events.APISubject("acme", "list"), "", nil), events.InboxPrefix("acme", domain.Ref{Kind: domain.KindService, ID: "ops"})); err != nil {
		t.Fatalf("the 401 into acme's inbox: %v", err)
	}
	for what, sub := range map[string]*nats.Subscription{"globex's inbox": xInbox, "a subject that is no inbox": other} {
		if m, err := sub.NextMsg(100 * time.Millisecond); err == nil {
			t.Errorf("%s received a reply: %v %s", what, m.Header, m.Data)
		}
	}
}
