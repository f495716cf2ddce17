package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// TestAPIIdempotencyKey: a repeat with a JCS-equal body returns the same
// request with 200 (as it is now); a different body is 422; the key is
// per principal (SPEC §5).
func TestAPIIdempotencyKey(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, prog, person := newClient(t, url, tokMain), newClient(t, url, tokProg), newClient(t, url, tokPerson)
	body := `{"tool":"deploy","arguments":{"env":"prod","n":1},"reason":"r"}`
	first := main.do("POST", "/v1/requests", body, "Idempotency-Key", "k-1").want(t, "first", http.StatusCreated).body
	id := str(first["id"])

	for _, tc := range []struct{ name, body string }{
		{"same body", body},
		{"reordered keys and whitespace", "{ \"reason\" : \"r\",\n \"arguments\": {\"n\": 1.0, \"env\": \"prod\"}, \"tool\":\"deploy\" }"},
		{"escaped but equal string", `{"tool":"d\u0065ploy","arguments":{"env":"prod","n":1},"reason":"r"}`},
	} {
		r := main.do("POST", "/v1/requests", tc.body, "Idempotency-Key", "k-1")
		r.want(t, tc.name, http.StatusOK)
		if got := str(r.body["id"]); got != id {
			t.Errorf("%s: id %s, want %s", tc.name, got, id)
		}
	}
	for _, tc := range []struct{ name, body string }{
		{"different arguments", `{"tool":"deploy","arguments":{"env":"dev","n":1},"reason":"r"}`},
		{"an added field", `{"tool":"deploy","arguments":{"env":"prod","n":1},"reason":"r","session":"s"}`},
	} {
		main.do("POST", "/v1/requests", tc.body, "Idempotency-Key", "k-1").wantProblem(t, tc.name, http.StatusUnprocessableEntity, "IdempotencyKeyReused", "")
	}

	// The repeat returns the request as it is now.
	person.answer(first, "allow", "once").want(t, "approve", http.StatusOK)
	r := main.do("POST", "/v1/requests", body, "Idempotency-Key", "k-1").want(t, "repeat after approval", http.StatusOK)
	if str(r.body["id"]) != id || str(r.body["status"]) != "approved" || num(r.body["revision"]) != 1 {
		t.Errorf("repeat after approval: id %v status %v revision %v; want %s approved 1", r.body["id"], r.body["status"], r.body["revision"], id)
	}

	// Another principal's key space: the same key and body make a new request.
	other := prog.do("POST", "/v1/requests", body, "Idempotency-Key", "k-1").want(t, "another principal, same key", http.StatusCreated)
	if str(other.body["id"]) == id {
		t.Errorf("another principal got the same request %s", id)
	}
	// Without a key, every submit is new.
	a := main.submit(map[string]any{"tool": "deploy", "arguments": map[string]any{}})
	b := main.submit(map[string]any{"tool": "deploy", "arguments": map[string]any{}})
	if a["id"] == b["id"] {
		t.Errorf("two submits without a key share id %v", a["id"])
	}
	if got := adminCount(t, url); got != 4 {
		t.Errorf("admin sees %d requests, want 4", got)
	}
}

// TestAPIIdempotencyConcurrent: 20 concurrent identical submits converge
// on one record.
func TestAPIIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	const n = 20
	type result struct {
		status int
		id     string
	}
	results := make([]result, n)
	together(n, func(i int) {
		r := main.do("POST", "/v1/requests", `{"tool":"deploy","arguments":{"n":1}}`, "Idempotency-Key", "same-key")
		results[i] = result{r.status, str(r.body["id"])}
	})
	created := 0
	for i, r := range results {
		if r.status != http.StatusCreated && r.status != http.StatusOK {
			t.Errorf("submit %d: status %d, want 201 or 200", i, r.status)
		}
		if r.status == http.StatusCreated {
			created++
		}
		if r.id != results[0].id {
			t.Errorf("submit %d: id %q, want %q", i, r.id, results[0].id)
		}
	}
	if created != 1 {
		t.Errorf("%d submits answered 201, want exactly 1 (the rest 200)", created)
	}
	if got := adminCount(t, url); got != 1 {
		t.Errorf("admin sees %d requests, want 1", got)
	}
}

// TestAPIIdempotencyTTL: a key is kept idempotency_ttl; after it, the key
// is free and makes a new request.
func TestAPIIdempotencyTTL(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, servertest.WithConfig(strings.Replace(acmeYAML, "approval_ttl: 5m", "approval_ttl: 5m\n    idempotency_ttl: 1s", 1))).URL
	main := newClient(t, url, tokMain)
	body := `{"tool":"deploy","arguments":{}}`
	first := main.do("POST", "/v1/requests", body, "Idempotency-Key", "k-ttl").want(t, "first", http.StatusCreated).body
	main.do("POST", "/v1/requests", body, "Idempotency-Key", "k-ttl").want(t, "repeat within the ttl", http.StatusOK)
	var r resp
	eventually(t, 10*time.Second, "the key is forgotten after idempotency_ttl", func() bool {
		r = main.do("POST", "/v1/requests", body, "Idempotency-Key", "k-ttl")
		return r.status == http.StatusCreated
	})
	if r.body["id"] == first["id"] {
		t.Errorf("after the ttl the key returned the old request %v", first["id"])
	}
}
