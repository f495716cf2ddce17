package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// quotaTenant is a tenant with the quotas given (SPEC §5): agt_main with
// two tokens, agt_other, and their person, on a clock the test steps (a
// token's bucket refills only when the test says so).
func quotaTenant(maxPending, rate, burst int) string {
	return fmt.Sprintf(`tenants:
  - id: demo
    max_pending: %d
    submit_rate: %d
    submit_burst: %d
    read_rules: ["tools.call:read_*"]
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_main, member: u-1}, {id: agt_other, member: u-1}]
    tokens:
      - {token: main-1, principal: "agent:agt_main", scopes: [requests:write]}
      - {token: main-2, principal: "agent:agt_main", scopes: [requests:write]}
      - {token: other, principal: "agent:agt_other", scopes: [requests:write]}
      - {token: person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: admin, principal: "person:u-1", scopes: [admin]}
`, maxPending, rate, burst)
}

func startQuota(t *testing.T, maxPending, rate, burst int) (*servertest.Server, *testutil.Clock) {
	clock := testutil.NewClock(time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC))
	return servertest.Start(t, servertest.WithClock(clock), servertest.WithConfig(quotaTenant(maxPending, rate, burst))), clock
}

// submitRaw posts a submit and returns the status, the problem's error
// and reason, and Retry-After.
func submitRaw(t *testing.T, url, token string, body any, key string) (code int, p struct{ Error, Reason string }, retry string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url+"/v1/requests", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+token)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&p)
	return resp.StatusCode, p, resp.Header.Get("Retry-After")
}

func read(i int) map[string]any {
	return map[string]any{"tool": "read_file", "arguments": map[string]any{"path": fmt.Sprint(i)}}
}

// wantLimited fails unless a submit answer is 429 RateLimited for reason,
// with Retry-After.
func wantLimited(t *testing.T, what string, code int, p struct{ Error, Reason string }, retry, reason string) {
	t.Helper()
	if code != 429 || p.Error != "RateLimited" || p.Reason != reason || retry == "" {
		t.Fatalf("%s: %d %+v Retry-After %q; want 429 RateLimited %s with Retry-After", what, code, p, retry, reason)
	}
}

// countRequests is the number of the tenant's requests with status, as
// an admin lists them.
func countRequests(t *testing.T, url, status string) int {
	t.Helper()
	var page struct{ Items []record }
	if code := newClient(url, "admin").do(t, "GET", "/v1/requests?limit=500&status="+status, nil, nil, &page); code != 200 {
		t.Fatalf("list: %d", code)
	}
	return len(page.Items)
}

// A tight loop from one token gets its burst, then 429 RateLimited with
// Retry-After, and the refused submits store nothing: no request, no
// Idempotency-Key. The agent's other token, another agent and the person
// are not throttled; the bucket refills with the clock.
func TestSubmitRateHTTP(t *testing.T) {
	srv, clock := startQuota(t, 1000, 5, 5)
	var created []record
	for i := range 5 {
		var r record
		if code := newClient(srv.URL, "main-1").do(t, "POST", "/v1/requests", read(i), nil, &r); code != 201 {
			t.Fatalf("submit %d of the burst: %d", i, code)
		}
		created = append(created, r)
	}
	for i := range 20 {
		code, p, retry := submitRaw(t, srv.URL, "main-1", read(100+i), fmt.Sprint("refused-", i))
		wantLimited(t, fmt.Sprintf("submit %d past the burst", i), code, p, retry, "submit_rate")
	}
	if got := metric(t, srv.URL, `countersign_submits_rate_limited_total{reason="submit_rate",tenant="demo"}`); got != 20 {
		t.Errorf("metric = %v, want 20", got)
	}
	var r record
	for _, tok := range []string{"main-2", "other"} {
		if code := newClient(srv.URL, tok).do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
			t.Fatalf("%s throttled by main-1's quota: %d", tok, code)
		}
	}
	person := newClient(srv.URL, "person")
	if code := person.do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "deny"}, nil, nil); code != 200 {
		t.Fatalf("a person's answer: %d", code)
	}
	if code := person.do(t, "GET", "/v1/requests/"+created[0].ID, nil, nil, nil); code != 200 {
		t.Fatalf("a person's read: %d", code)
	}
	if got := countRequests(t, srv.URL, "approved,pending,denied"); got != 7 {
		t.Fatalf("requests stored = %d, want 7 (5 of main-1's burst, one of main-2, one of other)", got)
	}
	clock.Advance(time.Second) // 5 a second: the bucket holds 5 again
	for i := range 5 {
		if code, p, _ := submitRaw(t, srv.URL, "main-1", read(200+i), fmt.Sprint("refused-", i)); code != 201 {
			t.Fatalf("submit %d after a second (the refused key stored nothing): %d %+v", i, code, p)
		}
	}
	code, p, retry := submitRaw(t, srv.URL, "main-1", read(300), "")
	wantLimited(t, "past the refilled burst", code, p, retry, "submit_rate")
}

// An agent has at most max_pending pending requests: past it, 429
// RateLimited with Retry-After and nothing stored, until one of them is
// answered or cancelled. A repeat of an existing Idempotency-Key stores
// nothing and is answered; other agents are not held to it.
func TestMaxPendingHTTP(t *testing.T) {
	srv, _ := startQuota(t, 3, 100, 100)
	main := newClient(srv.URL, "main-1")
	var pending []record
	for i := range 3 {
		var r record
		if code := main.do(t, "POST", "/v1/requests", refund(i), map[string]string{"Idempotency-Key": fmt.Sprint("k", i)}, &r); code != 201 || r.Status != "pending" {
			t.Fatalf("pending %d: %d %s", i, code, r.Status)
		}
		pending = append(pending, r)
	}
	for _, tok := range []string{"main-1", "main-2"} {
		code, p, retry := submitRaw(t, srv.URL, tok, refund(10), "fresh")
		wantLimited(t, tok+" past max_pending", code, p, retry, "max_pending")
	}
	code, p, retry := submitRaw(t, srv.URL, "main-1", read(10), "")
	wantLimited(t, "a read past max_pending", code, p, retry, "max_pending")
	var again record
	if code := main.do(t, "POST", "/v1/requests", refund(0), map[string]string{"Idempotency-Key": "k0"}, &again); code != 200 || again.ID != pending[0].ID {
		t.Fatalf("repeat of an existing key: %d %s, want 200 %s", code, again.ID, pending[0].ID)
	}
	if code := newClient(srv.URL, "other").do(t, "POST", "/v1/requests", refund(1), nil, nil); code != 201 {
		t.Fatalf("another agent: %d", code)
	}
	if got := countRequests(t, srv.URL, "pending"); got != 4 {
		t.Fatalf("pending = %d, want 4 (3 of agt_main, 1 of agt_other)", got)
	}
	if got := metric(t, srv.URL, `countersign_submits_rate_limited_total{reason="max_pending",tenant="demo"}`); got != 3 {
		t.Errorf("metric = %v, want 3", got)
	}

	if code := newClient(srv.URL, "person").do(t, "POST", "/v1/requests/"+pending[0].ID, map[string]any{"expected": 0, "decision": "deny"}, nil, nil); code != 200 {
		t.Fatalf("answer: %d", code)
	}
	if code := main.do(t, "POST", "/v1/requests", refund(10), map[string]string{"Idempotency-Key": "fresh"}, nil); code != 201 {
		t.Fatalf("after an answer (and the refused key stored nothing): %d", code)
	}
	code, p, retry = submitRaw(t, srv.URL, "main-1", refund(11), "")
	wantLimited(t, "full again", code, p, retry, "max_pending")
	if code := main.do(t, "POST", "/v1/requests/"+pending[1].ID+"/cancel", nil, nil, nil); code != 200 {
		t.Fatalf("cancel: %d", code)
	}
	if code := main.do(t, "POST", "/v1/requests", refund(11), nil, nil); code != 201 {
		t.Fatalf("after a cancel: %d", code)
	}
}

// The bus refuses as HTTP does: Nats-Service-Error-Code 429, the problem
// as the body, and Retry-After.
func TestQuotasOverTheBus(t *testing.T) {
	srv, _ := startQuota(t, 2, 3, 3)
	c := mustDial(t, srv, "main-1", "demo", domain.Ref{Kind: domain.KindAgent, ID: "agt_main"})
	submit := func(body any) (*nats.Msg, struct{ Error, Reason string }) {
		t.Helper()
		msg := nats.NewMsg(events.APISubject("demo", events.OpSubmit))
		msg.Header.Set("Authorization", "Bearer main-1")
		msg.Data, _ = json.Marshal(body)
		reply, err := c.nc.RequestMsg(msg, 10*time.Second)
		if err != nil {
			t.Fatalf("submit over the bus: %v", err)
		}
		var p struct{ Error, Reason string }
		_ = json.Unmarshal(reply.Data, &p)
		return reply, p
	}
	limited := func(what string, reply *nats.Msg, p struct{ Error, Reason string }, reason string) {
		t.Helper()
		if reply.Header.Get("Nats-Service-Error-Code") != "429" || p.Error != "RateLimited" || p.Reason != reason || reply.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: headers %v body %s; want 429 RateLimited %s with Retry-After", what, reply.Header, reply.Data, reason)
		}
	}
	for i := range 2 {
		if reply, _ := submit(refund(i)); reply.Header.Get("Status") != "201" {
			t.Fatalf("pending %d: %v %s", i, reply.Header, reply.Data)
		}
	}
	reply, p := submit(refund(2))
	limited("past max_pending", reply, p, "max_pending")
	reply, p = submit(refund(3))
	limited("past the burst", reply, p, "submit_rate")
	if got := countRequests(t, srv.URL, "pending"); got != 2 {
		t.Fatalf("pending = %d, want 2", got)
	}
	c.clean(t)
}
