package busapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

type obj = map[string]any

func keys(m obj) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// TestOpsLikeHTTP runs every operation over the bus and checks each
// answer against the HTTP API's answer for the same action.
func TestOpsLikeHTTP(t *testing.T) {
	e := start(t, acmeYAML)
	deploy := obj{"tool": "deploy", "arguments": obj{"env": "prod", "note": "<b>as stored</b> & unescaped"}} // JSON as over HTTP: not HTML-escaped

	sub := e.req("acme", "submit", tokMain, deploy).want(t, "submit", http.StatusCreated)
	code, raw := e.httpDo("POST", "/v1/requests", tokMain, deploy)
	var viaHTTP obj
	_ = json.Unmarshal(raw, &viaHTTP)
	if code != http.StatusCreated || len(keys(viaHTTP)) != len(keys(sub.body)) {
		t.Errorf("submit: bus 201 %v, http %d %v", keys(sub.body), code, keys(viaHTTP))
	}
	id := str(sub.body["id"])

	code, raw = e.httpDo("GET", "/v1/requests/"+id, tokMain, nil)
	same(t, "get", e.req("acme", "get", tokMain, obj{"id": id}), code, raw)
	code, raw = e.httpDo("GET", "/v1/requests?status=pending&limit=1", tokPerson, nil)
	same(t, "list", e.req("acme", "list", tokPerson, obj{"status": "pending", "limit": 1}), code, raw)

	ans := e.req("acme", "answer", tokPerson, obj{"id": id, "expected": sub.body["revision"], "decision": "allow", "scope": "lifetime"}).want(t, "answer", http.StatusOK)
	if ans.body["status"] != "approved" {
		t.Fatalf("answer: %s", ans.raw)
	}
	code, raw = e.httpDo("GET", "/v1/requests/"+id, tokPerson, nil)
	same(t, "answer's record", ans, code, raw)

	code, raw = e.httpDo("GET", "/v1/grants", tokPerson, nil)
	grants := e.req("acme", "grants", tokPerson, nil)
	same(t, "grants", grants, code, raw)
	items, _ := grants.body["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("grants: %s", grants.raw)
	}
	grant := str(items[0].(obj)["id"])

	claimed := e.req("acme", "claim", tokMain, obj{"id": id, "call_digest": sub.body["call_digest"]}).want(t, "claim", http.StatusOK)
	code, raw = e.httpDo("GET", "/v1/requests/"+id, tokMain, nil)
	same(t, "claim's record", claimed, code, raw)

	revoked := e.req("acme", "revoke", tokPerson, obj{"id": grant}).want(t, "revoke", http.StatusOK)
	if revoked.body["revoked_at"] == nil || revoked.body["id"] != grant {
		t.Errorf("revoke: %s", revoked.raw)
	}
	code, raw = e.httpDo("GET", "/v1/grants?revoked=true", tokPerson, nil)
	same(t, "revoked grants", e.req("acme", "grants", tokPerson, obj{"revoked": true}), code, raw)

	other := e.req("acme", "submit", tokMain, obj{"tool": "other", "arguments": obj{}}).want(t, "submit other", http.StatusCreated)
	cancelled := e.req("acme", "cancel", tokMain, obj{"id": other.body["id"]}).want(t, "cancel", http.StatusOK)
	code, raw = e.httpDo("GET", "/v1/requests/"+str(other.body["id"]), tokMain, nil)
	same(t, "cancel's record", cancelled, code, raw)
	if cancelled.body["status"] != "cancelled" {
		t.Errorf("cancel: %s", cancelled.raw)
	}

	// Submits count alike on both surfaces: two over the bus, one over HTTP.
	code, raw = e.httpDo("GET", "/metrics", "", nil)
	for _, want := range []string{`countersign_requests_submitted_total{by="chain",status="pending"} 3`, `countersign_bus_requests_total{code="201",op="submit"} 2`} {
		if code != http.StatusOK || !strings.Contains(string(raw), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestGetWaits: get with wait long-polls through the same hub as HTTP and
// answers as soon as the request is decided.
func TestGetWaits(t *testing.T) {
	e := start(t, acmeYAML)
	sub := e.req("acme", "submit", tokMain, obj{"tool": "deploy", "arguments": obj{}}).want(t, "submit", http.StatusCreated)
	id := str(sub.body["id"])
	got := make(chan reply, 1)
	go func() { got <- e.req("acme", "get", tokMain, obj{"id": id, "wait": "50s"}) }()
	testutil.Eventually(t, 10*time.Second, func() bool { return e.srv.App.Service.Hub().Waiting() == 1 }, "the get to wait")
	e.http.Answer(tokPerson, idOf(id), "deny", "no")
	r := (<-got).want(t, "get with wait", http.StatusOK)
	if r.body["status"] != "denied" {
		t.Errorf("waited get: %s", r.raw)
	}
}

// TestIdempotencyKey: a repeat with a JCS-equal body is the same request
// (200); another body under the key is 422.
func TestIdempotencyKey(t *testing.T) {
	e := start(t, acmeYAML)
	first := e.req("acme", "submit", tokMain, `{"tool":"deploy","arguments":{"a":1,"b":2}}`, "Idempotency-Key", "k-1").want(t, "first", http.StatusCreated)
	again := e.req("acme", "submit", tokMain, `{"arguments":{"b":2,"a":1},"tool":"deploy"}`, "Idempotency-Key", "k-1").want(t, "repeat", http.StatusOK)
	if again.body["id"] != first.body["id"] {
		t.Errorf("repeat made %v, want %v", again.body["id"], first.body["id"])
	}
	e.req("acme", "submit", tokMain, `{"tool":"deploy","arguments":{"a":2}}`, "Idempotency-Key", "k-1").
		wantProblem(t, "other body", http.StatusUnprocessableEntity, "IdempotencyKeyReused", "")
	code, raw := e.httpDo("POST", "/v1/requests", tokMain, obj{"tool": "deploy", "arguments": obj{"a": 1, "b": 2}})
	if code != http.StatusCreated {
		t.Errorf("HTTP without the key: %d %s", code, raw)
	}
}

// TestRepliesNotHTMLEscaped: a record's JSON is sent as stored, as over
// HTTP: "<" is not written as \u003c (six times the bytes).
func TestRepliesNotHTMLEscaped(t *testing.T) {
	e := start(t, acmeYAML)
	m := nats.NewMsg(events.APISubject("acme", "submit"))
	m.Header.Set("Authorization", "Bearer "+tokMain)
	m.Data = []byte(`{"tool":"deploy","arguments":{"note":"<b>&</b>"}}`)
	resp, err := e.client(tokMain).RequestMsg(m, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r := parse(t, resp).want(t, "submit", http.StatusCreated); !bytes.Contains(r.raw, []byte(`"note":"<b>&</b>"`)) {
		t.Fatalf("reply %s: want the arguments as stored", r.raw)
	}
}
