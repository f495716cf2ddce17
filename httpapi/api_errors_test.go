package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestAPISubmitBadInput: each bad body is 400 InvalidRequest naming the
// field (413 over 1 MiB), and creates nothing (SPEC §4, §5).
func TestAPISubmitBadInput(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	long := strings.Repeat("s", 257)
	big := `{"tool":"deploy","arguments":{"blob":"` + strings.Repeat("x", 1<<20) + `"}}`
	for _, tc := range []struct {
		name  string
		body  string
		code  int
		err   string
		field string // "" : any non-empty field; "-": not checked
	}{
		{"malformed JSON", `{"tool":"deploy","arguments":{}`, 400, "InvalidRequest", ""},
		{"empty body", ``, 400, "InvalidRequest", ""},
		{"not an object", `[{"tool":"deploy","arguments":{}}]`, 400, "InvalidRequest", ""},
		{"trailing data", `{"tool":"deploy","arguments":{}} {}`, 400, "InvalidRequest", ""},
		{"unknown field", `{"tool":"deploy","arguments":{},"bogus":1}`, 400, "InvalidRequest", "bogus"},
		{"missing arguments", `{"tool":"deploy"}`, 400, "InvalidRequest", "arguments"},
		{"arguments null", `{"tool":"deploy","arguments":null}`, 400, "InvalidRequest", "arguments"},
		{"arguments an array", `{"tool":"deploy","arguments":[1]}`, 400, "InvalidRequest", "arguments"},
		{"arguments a string", `{"tool":"deploy","arguments":"x"}`, 400, "InvalidRequest", "arguments"},
		{"tool of the wrong type", `{"tool":5,"arguments":{}}`, 400, "InvalidRequest", "tool"},
		{"neither tool nor capability", `{"arguments":{}}`, 400, "InvalidRequest", ""},
		{"both tool and capability", `{"tool":"deploy","capability":{"action":"tools.call","target":"deploy"},"arguments":{}}`, 400, "InvalidRequest", ""},
		{"unknown capability action", `{"capability":{"action":"files.write","target":"x"},"arguments":{}}`, 400, "InvalidRequest", "capability.action"},
		{"capability without target", `{"capability":{"action":"tools.call"},"arguments":{}}`, 400, "InvalidRequest", "capability.target"},
		{"unparsable timeout", `{"tool":"deploy","arguments":{},"timeout":"soon"}`, 400, "InvalidRequest", "timeout"},
		{"timeout without unit", `{"tool":"deploy","arguments":{},"timeout":"30"}`, 400, "InvalidRequest", "timeout"},
		{"timeout under 1s", `{"tool":"deploy","arguments":{},"timeout":"999ms"}`, 400, "InvalidRequest", "timeout"},
		{"negative timeout", `{"tool":"deploy","arguments":{},"timeout":"-5s"}`, 400, "InvalidRequest", "timeout"},
		{"session over 256 bytes", `{"tool":"deploy","arguments":{},"session":"` + long + `"}`, 400, "InvalidRequest", "session"},
		{"turn over 256 bytes", `{"tool":"deploy","arguments":{},"turn":"` + long + `"}`, 400, "InvalidRequest", "turn"},
		{"tool_call_id over 256 bytes", `{"tool":"deploy","arguments":{},"tool_call_id":"` + long + `"}`, 400, "InvalidRequest", "tool_call_id"},
		{"duplicate top-level key", `{"tool":"deploy","tool":"read_file","arguments":{}}`, 400, "InvalidRequest", ""},
		{"duplicate key in arguments", `{"tool":"deploy","arguments":{"a":1,"a":2}}`, 400, "InvalidRequest", ""},
		{"number beyond a double", `{"tool":"deploy","arguments":{"n":12345678901234567890}}`, 400, "InvalidRequest", ""},
		{"number overflowing a double", `{"tool":"deploy","arguments":{"n":1e400}}`, 400, "InvalidRequest", ""},
		{"precise decimal beyond a double", `{"tool":"deploy","arguments":{"n":0.12345678901234567890123}}`, 400, "InvalidRequest", ""},
		{"invalid UTF-8", "{\"tool\":\"deploy\",\"arguments\":{\"s\":\"\xff\xfe\"}}", 400, "InvalidRequest", ""},
		{"body over 1 MiB", big, 413, "PayloadTooLarge", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := main.do("POST", "/v1/requests", tc.body)
			field := tc.field
			if field == "-" {
				field = ""
			}
			r.wantProblem(t, tc.name, tc.code, tc.err, field)
			if tc.field == "" && r.status == 400 && str(r.body["field"]) == "" {
				t.Errorf("400 without field: %s", r.raw)
			}
		})
	}
	// Idempotency-Key does not make bad input create anything either.
	main.do("POST", "/v1/requests", `{"tool":"deploy"}`, "Idempotency-Key", "k").wantProblem(t, "keyed bad body", 400, "InvalidRequest", "arguments")
	if got := adminCount(t, url); got != 0 {
		t.Errorf("bad input created %d requests, want 0", got)
	}
	if items, _, _ := newClient(t, url, tokPerson).list(""); len(items) != 0 {
		t.Errorf("bad input put %d requests in the person's inbox, want 0", len(items))
	}
	// The key was not spent by the bad body.
	main.do("POST", "/v1/requests", `{"tool":"deploy","arguments":{}}`, "Idempotency-Key", "k").want(t, "key after a bad body", http.StatusCreated)
}

// TestAPIAuth: 401 without a valid bearer token, 403 without the scope or
// for the wrong principal kind, in the order 401 → 403 → 400 (SPEC §5).
func TestAPIAuth(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	rec := newClient(t, url, tokMain).pending()
	id := str(rec["id"])
	good := `{"tool":"deploy","arguments":{}}`
	for _, tc := range []struct {
		name, token, method, path, body string
		code                            int
		err                             string
		header                          []string
	}{
		{"no token", "", "POST", "/v1/requests", good, 401, "Unauthenticated", nil},
		{"no token, bad body", "", "POST", "/v1/requests", `{`, 401, "Unauthenticated", nil},
		{"unknown token", "nope", "POST", "/v1/requests", good, 401, "Unauthenticated", nil},
		{"basic auth", "", "POST", "/v1/requests", good, 401, "Unauthenticated", []string{"Authorization", "Basic dG9rLW1haW46"}},
		{"no token get", "", "GET", "/v1/requests/" + id, "", 401, "Unauthenticated", nil},
		{"no token list", "", "GET", "/v1/requests", "", 401, "Unauthenticated", nil},
		{"no token answer", "", "POST", "/v1/requests/" + id, `{"expected":0,"decision":"allow"}`, 401, "Unauthenticated", nil},
		{"no token cancel", "", "POST", "/v1/requests/" + id + "/cancel", "", 401, "Unauthenticated", nil},
		{"no token claim", "", "POST", "/v1/requests/" + id + "/claim", `{"call_digest":"x"}`, 401, "Unauthenticated", nil},
		{"no token grants", "", "GET", "/v1/grants", "", 401, "Unauthenticated", nil},
		{"no token revoke", "", "DELETE", "/v1/grants/grt_01JC0000000000000000000000", "", 401, "Unauthenticated", nil},
		{"no token register", "", "POST", "/v1/agents", `{}`, 401, "Unauthenticated", nil},
		{"no token rules", "", "GET", "/v1/agents/agt_main/rules", "", 401, "Unauthenticated", nil},
		{"no token events", "", "GET", "/v1/events", "", 401, "Unauthenticated", nil},
		{"submit without requests:write", tokNoWrite, "POST", "/v1/requests", good, 403, "Forbidden", nil},
		{"submit without requests:write, bad body", tokNoWrite, "POST", "/v1/requests", `{`, 403, "Forbidden", nil},
		{"person submits", tokPersonW, "POST", "/v1/requests", good, 403, "Forbidden", nil},
		{"admin service submits", tokAdmin, "POST", "/v1/requests", good, 403, "Forbidden", nil},
		{"answer without approvals:write", tokPersonRO, "POST", "/v1/requests/" + id, `{"expected":0,"decision":"allow"}`, 403, "Forbidden", nil},
		{"answer without approvals:write, bad body", tokPersonRO, "POST", "/v1/requests/" + id, `{`, 403, "Forbidden", nil},
		{"list without approvals:read", tokNoRead, "GET", "/v1/requests", "", 403, "Forbidden", nil},
		{"grants without approvals:read", tokNoRead, "GET", "/v1/grants", "", 403, "Forbidden", nil},
		{"revoke without approvals:write", tokPersonRO, "DELETE", "/v1/grants/grt_01JC0000000000000000000000", "", 403, "Forbidden", nil},
		{"rules without approvals:read", tokNoRead, "GET", "/v1/agents/agt_main/rules", "", 403, "Forbidden", nil},
		{"add rule without approvals:write", tokPersonRO, "POST", "/v1/agents/agt_main/rules", `{"text":"x"}`, 403, "Forbidden", nil},
		{"events without approvals:read", tokNoRead, "GET", "/v1/events", "", 403, "Forbidden", nil},
		{"cancel without requests:write", tokNoWrite, "POST", "/v1/requests/" + id + "/cancel", "", 403, "Forbidden", nil},
		{"claim without requests:write", tokNoWrite, "POST", "/v1/requests/" + id + "/claim", `{"call_digest":"x"}`, 403, "Forbidden", nil},
		{"register without requests:write", tokNoWrite, "POST", "/v1/agents", `{}`, 403, "Forbidden", nil},
		{"person cancels", tokPersonW, "POST", "/v1/requests/" + id + "/cancel", "", 403, "Forbidden", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			newClient(t, url, tc.token).do(tc.method, tc.path, body, tc.header...).wantProblem(t, tc.name, tc.code, tc.err, "")
		})
	}
	if got := adminCount(t, url); got != 1 {
		t.Errorf("refused calls: admin sees %d requests, want 1", got)
	}
	if got := newClient(t, url, tokPerson).get(id); num(got["revision"]) != 0 || str(got["status"]) != "pending" {
		t.Errorf("refused calls changed the request: %v", got)
	}
	// A token with no scope still reads what it may see (GET needs any scope).
	newClient(t, url, tokPersonNone).do("GET", "/v1/requests/"+id, nil).want(t, "get with a scopeless token", http.StatusOK)
}

// TestAPIRoutesAndRequestID: unknown paths are 404 NotFound, wrong methods
// 405 MethodNotAllowed, unknown or foreign ids 404 RequestNotFound, and
// every response carries X-Request-ID (the client's when valid).
func TestAPIRoutesAndRequestID(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	rec := newClient(t, url, tokMain).pending()
	id := str(rec["id"])
	for _, tc := range []struct {
		name, token, method, path string
		code                      int
		err                       string
	}{
		{"unknown path", tokMain, "GET", "/v1/nope", 404, "NotFound"},
		{"unknown version", tokMain, "GET", "/v2/requests", 404, "NotFound"},
		{"root", "", "GET", "/nothing-here", 404, "NotFound"},
		{"PUT requests", tokMain, "PUT", "/v1/requests", 405, "MethodNotAllowed"},
		{"DELETE a request", tokMain, "DELETE", "/v1/requests/" + id, 405, "MethodNotAllowed"},
		{"PATCH grants", tokPerson, "PATCH", "/v1/grants", 405, "MethodNotAllowed"},
		{"GET agents", tokMain, "GET", "/v1/agents", 405, "MethodNotAllowed"},
		{"POST healthz", "", "POST", "/healthz", 405, "MethodNotAllowed"},
		{"GET cancel", tokMain, "GET", "/v1/requests/" + id + "/cancel", 405, "MethodNotAllowed"},
		{"GET claim", tokMain, "GET", "/v1/requests/" + id + "/claim", 405, "MethodNotAllowed"},
		{"POST grants", tokPerson, "POST", "/v1/grants", 405, "MethodNotAllowed"},
		{"unknown sub-resource", tokMain, "POST", "/v1/requests/" + id + "/approve", 404, "NotFound"},
		{"missing request id", tokPerson, "GET", "/v1/requests/req_01JC0000000000000000000000", 404, "RequestNotFound"},
		{"malformed request id", tokPerson, "GET", "/v1/requests/nonsense", 404, "RequestNotFound"},
		{"another tenant's request (agent)", tokX, "GET", "/v1/requests/" + id, 404, "RequestNotFound"},
		{"another tenant's request (person)", tokXPerson, "GET", "/v1/requests/" + id, 404, "RequestNotFound"},
		{"another tenant answers", tokXPerson, "POST", "/v1/requests/" + id, 404, "RequestNotFound"},
		{"another tenant cancels", tokX, "POST", "/v1/requests/" + id + "/cancel", 404, "RequestNotFound"},
		{"another tenant claims", tokX, "POST", "/v1/requests/" + id + "/claim", 404, "RequestNotFound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.method == "POST" && strings.HasPrefix(tc.path, "/v1/requests/") {
				body = map[string]any{"expected": 0, "decision": "allow"}
				if strings.HasSuffix(tc.path, "/claim") {
					body = map[string]any{"call_digest": rec["call_digest"]}
				} else if strings.HasSuffix(tc.path, "/cancel") {
					body = nil
				}
			}
			r := newClient(t, url, tc.token).do(tc.method, tc.path, body)
			r.wantProblem(t, tc.name, tc.code, tc.err, "")
			if tc.code == http.StatusMethodNotAllowed && r.header.Get("Allow") == "" {
				t.Errorf("405 without an Allow header")
			}
		})
	}
	if got := newClient(t, url, tokPerson).get(id); num(got["revision"]) != 0 || str(got["status"]) != "pending" {
		t.Errorf("another tenant changed the request: %v", got)
	}

	c := newClient(t, url, tokMain)
	for _, tc := range []struct {
		name, sent string
		echoed     bool
	}{
		{"valid id echoed", "trace-abc_123.4:5", true},
		{"valid id echoed on an error", "err-7", true},
		{"invalid id replaced", "has spaces", false},
		{"overlong id replaced", strings.Repeat("a", 300), false},
	} {
		path := "/v1/requests/" + id
		if strings.Contains(tc.name, "error") {
			path = "/v1/nope"
		}
		r := c.do("GET", path, nil, "X-Request-ID", tc.sent)
		got := r.header.Get("X-Request-ID")
		if tc.echoed && got != tc.sent {
			t.Errorf("%s: X-Request-ID %q, want %q", tc.name, got, tc.sent)
		}
		if !tc.echoed && (got == tc.sent || got == "") {
			t.Errorf("%s: X-Request-ID %q, want a new id", tc.name, got)
		}
	}
}

// TestAPIStrictBodies: every request body is strict JSON; unknown fields
// are 400 on every endpoint that takes a body.
func TestAPIStrictBodies(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	rec := main.pending()
	id := str(rec["id"])
	for _, tc := range []struct {
		name, token, path, body string
	}{
		{"answer", tokPerson, "/v1/requests/" + id, `{"expected":0,"decision":"allow","bogus":true}`},
		{"answer, duplicate key", tokPerson, "/v1/requests/" + id, `{"expected":0,"decision":"deny","decision":"allow"}`},
		{"answer, expected not a number", tokPerson, "/v1/requests/" + id, `{"expected":"0","decision":"allow"}`},
		{"cancel", tokMain, "/v1/requests/" + id + "/cancel", `{"bogus":true}`},
		{"claim", tokMain, "/v1/requests/" + id + "/claim", `{"call_digest":"x","bogus":true}`},
		{"register", tokMain, "/v1/agents", `{"bogus":true}`},
		{"add rule", tokPerson, "/v1/agents/agt_main/rules", `{"text":"x","bogus":true}`},
		// 400 comes before 404.
		{"cancel a missing request, bad body", tokMain, "/v1/requests/req_01JC0000000000000000000000/cancel", `{"bogus":true}`},
		{"claim a missing request, no digest", tokMain, "/v1/requests/req_01JC0000000000000000000000/claim", `{}`},
		{"claim another tenant's request, bad body", tokX, "/v1/requests/" + id + "/claim", `{"call_digest":1}`},
		{"rule for another member's agent, blank", tokPerson2, "/v1/agents/agt_main/rules", `{"text":""}`},
		{"rule for an unknown agent, unknown field", tokPerson, "/v1/agents/agt_nobody/rules", `{"txt":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newClient(t, url, tc.token).do("POST", tc.path, tc.body).wantProblem(t, tc.name, 400, "InvalidRequest", "")
		})
	}
	big := `{"expected":0,"decision":"allow","reason":"` + strings.Repeat("x", 1<<20) + `"}`
	newClient(t, url, tokPerson).do("POST", "/v1/requests/"+id, big).wantProblem(t, "answer over 1 MiB", http.StatusRequestEntityTooLarge, "PayloadTooLarge", "")
	if got := main.get(id); num(got["revision"]) != 0 || str(got["status"]) != "pending" {
		t.Errorf("bad bodies changed the request: %v", got)
	}
	rules := newClient(t, url, tokPerson).do("GET", "/v1/agents/agt_main/rules", nil).want(t, "rules", http.StatusOK)
	if n := len(objects(rules.body["items"])); n != 0 {
		t.Errorf("a bad rule body kept %d rules: %s", n, rules.raw)
	}
}
