package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// TestAPIConcurrentAnswers: concurrent allow and deny answers at the same
// revision decide the request once; the losing decision is 409, a repeat
// of the winning one 200 (SPEC §4, §5 answer rules).
func TestAPIConcurrentAnswers(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.pending()
	const n = 16
	codes := make([]int, n)
	together(n, func(i int) {
		decision := "allow"
		if i%2 == 1 {
			decision = "deny"
		}
		codes[i] = person.do("POST", "/v1/requests/"+str(rec["id"]), map[string]any{"expected": 0, "decision": decision}).status
	})
	final := person.get(str(rec["id"]))
	if num(final["revision"]) != 1 {
		t.Errorf("revision %v after concurrent answers, want 1", final["revision"])
	}
	winner := 0 // index parity of the winning decision
	if str(final["status"]) == "denied" {
		winner = 1
	}
	for i, code := range codes {
		want := http.StatusConflict
		if i%2 == winner {
			want = http.StatusOK
		}
		if code != want {
			t.Errorf("answer %d (%s won): status %d, want %d", i, final["status"], code, want)
		}
	}
}

// TestAPIConcurrentClaims: one approval is claimed exactly once.
func TestAPIConcurrentClaims(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	rec := main.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}})
	const n = 16
	codes := make([]int, n)
	reasons := make([]string, n)
	together(n, func(i int) {
		r := main.do("POST", "/v1/requests/"+str(rec["id"])+"/claim", map[string]any{"call_digest": rec["call_digest"]})
		codes[i], reasons[i] = r.status, str(r.body["reason"])
	})
	ok := 0
	for i := range codes {
		switch {
		case codes[i] == http.StatusOK:
			ok++
		case codes[i] != http.StatusConflict || reasons[i] != "already_claimed":
			t.Errorf("claim %d: %d %q, want 200 or 409 already_claimed", i, codes[i], reasons[i])
		}
	}
	if ok != 1 {
		t.Errorf("%d claims succeeded, want exactly 1", ok)
	}
	if got := num(main.get(str(rec["id"]))["revision"]); got != 1 {
		t.Errorf("revision %d after claims, want 1", got)
	}
}

// TestAPIRestart: waiting survives a restart — pending requests, their
// deadlines, grants and idempotency keys live in JetStream (SPEC §4).
func TestAPIRestart(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, servertest.WithConfig(acmeYAML))
	main, person := newClient(t, s.URL, tokMain), newClient(t, s.URL, tokPerson)
	pend := main.do("POST", "/v1/requests", `{"tool":"deploy","arguments":{}}`, "Idempotency-Key", "k-r").want(t, "keyed submit", http.StatusCreated).body
	soon := main.pending("timeout", "2s", "arguments", map[string]any{"x": 1})
	person.answer(main.pending("session", "s1"), "allow", "lifetime").want(t, "lifetime grant", http.StatusOK)

	s.Restart(t)
	main, person = newClient(t, s.URL, tokMain), newClient(t, s.URL, tokPerson)
	if got := main.get(str(pend["id"])); str(got["status"]) != "pending" || num(got["revision"]) != 0 {
		t.Errorf("pending request after restart: %v", got)
	}
	r := main.do("POST", "/v1/requests", `{"tool":"deploy","arguments":{}}`, "Idempotency-Key", "k-r").want(t, "keyed repeat after restart", http.StatusOK)
	if r.body["id"] != pend["id"] {
		t.Errorf("keyed repeat after restart: id %v, want %v", r.body["id"], pend["id"])
	}
	if rec := main.submit(map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}}); str(rec["status"]) != "approved" || str(obj(obj(rec["decision"])["by"])["kind"]) != "grant" {
		t.Errorf("lifetime grant after restart: %v by %s, want approved by grant", rec["status"], by(rec))
	}
	eventually(t, 15*time.Second, "the deadline set before the restart fires", func() bool {
		return str(main.get(str(soon["id"]))["status"]) == "expired"
	})
	if items, _, _ := person.list("?status=pending"); !contains(ids(items), str(pend["id"])) {
		t.Errorf("the pending request left the person's inbox after restart")
	}
	person.answer(main.get(str(pend["id"])), "allow", "").want(t, "answer after restart", http.StatusOK)
}

// TestAPIUnavailable: with NATS unreachable, readiness and state-touching
// calls are 503 Unavailable with Retry-After (SPEC §5), and liveness is
// still 200.
func TestAPIUnavailable(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, servertest.WithConfig(acmeYAML))
	main := newClient(t, s.URL, tokMain)
	rec := main.pending()
	s.App.Broker.Server.Shutdown() // the embedded NATS server goes away
	newClient(t, s.URL, "").do("GET", "/healthz", nil).want(t, "healthz without NATS", http.StatusOK)
	for _, tc := range []struct{ name, token, method, path, body string }{
		{"readyz", "", "GET", "/readyz", ""},
		{"submit", tokMain, "POST", "/v1/requests", `{"tool":"deploy","arguments":{}}`},
		{"get", tokMain, "GET", "/v1/requests/" + str(rec["id"]), ""},
		{"answer", tokPerson, "POST", "/v1/requests/" + str(rec["id"]), `{"expected":0,"decision":"allow"}`},
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		r := newClient(t, s.URL, tc.token).do(tc.method, tc.path, body)
		r.wantProblem(t, tc.name+" without NATS", http.StatusServiceUnavailable, "Unavailable", "")
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%s without NATS: no Retry-After", tc.name)
		}
	}
}
