package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// These tests hold the OpenAPI document (openapi.json, served at
// GET /v1/openapi.json) to the running server: every response below is a
// real one, validated with kin-openapi's openapi3filter, which validates
// an OpenAPI 3.1 document's schemas as JSON Schema 2020-12. The schemas
// forbid unknown properties, and an undocumented status fails, so a field
// or status that drifts from the document turns them red.

// The inbox's page and assets are text to the validator, as text/plain is.
func init() {
	for _, ct := range []string{"text/html", "text/javascript", "text/css", "image/svg+xml"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
}

// spec validates exchanges with a server against its served document.
type spec struct {
	t      *testing.T
	url    string
	doc    *openapi3.T
	router routers.Router
}

func loadSpec(t *testing.T, url string) *spec {
	t.Helper()
	resp, err := http.Get(url + "/v1/openapi.json") // no token: the document is public
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("load the document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q: want 3.1", doc.OpenAPI)
	}
	doc.Servers = nil // match paths on the test server's address
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &spec{t: t, url: url, doc: doc, router: router}
}

// call is one exchange: the request and whether to validate it too (a
// deliberately bad request is not).
type call struct {
	method, path, token string
	body                any // JSON-encoded; a string is sent as is
	header              map[string]string
	badRequest          bool
}

// do sends c, checks the request (unless bad) and the real response
// against the document, and returns the status and the decoded body.
func (s *spec) do(c call) (int, map[string]any) {
	s.t.Helper()
	req, raw := s.request(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	s.check(c, raw, resp, data, false)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

func (s *spec) request(c call) (*http.Request, []byte) {
	s.t.Helper()
	var raw []byte
	switch b := c.body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		raw, _ = json.Marshal(b)
	}
	req, err := http.NewRequest(c.method, s.url+c.path, bytes.NewReader(raw))
	if err != nil {
		s.t.Fatal(err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	return req, raw
}

// check validates one exchange; skipBody leaves out the response body (an
// event stream never ends).
func (s *spec) check(c call, raw []byte, resp *http.Response, data []byte, skipBody bool) {
	s.t.Helper()
	req, _ := http.NewRequest(c.method, s.url+c.path, bytes.NewReader(raw))
	req.Header = resp.Request.Header.Clone()
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		s.t.Fatalf("%s %s is not in the document: %v", c.method, c.path, err)
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, ExcludeResponseBody: skipBody}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	ctx := context.Background()
	if !c.badRequest {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			s.t.Errorf("%s %s: the request does not match the document: %v", c.method, c.path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(data)), Options: opts}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		s.t.Errorf("%s %s → %d: the response does not match the document: %v\n%s", c.method, c.path, resp.StatusCode, err, data)
	}
}

// want fails unless the exchange's status is code.
func (s *spec) want(code int, c call) map[string]any {
	s.t.Helper()
	got, body := s.do(c)
	if got != code {
		s.t.Fatalf("%s %s: status %d, want %d: %v", c.method, c.path, got, code, body)
	}
	return body
}

// stream opens an event stream and checks its status and headers only.
func (s *spec) stream(c call) {
	s.t.Helper()
	req, raw := s.request(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		s.t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	s.check(c, raw, resp, nil, true)
}

func refundCall(payment string) map[string]any {
	return map[string]any{"tool": "issue_refund", "reason": "Duplicate charge.",
		"arguments": map[string]any{"payment_id": payment, "amount": 4900, "currency": "GBP"}}
}

// TestOpenAPIMatchesResponses walks a request through its life, and the
// refusals SPEC §5 names, validating every real exchange.
func TestOpenAPIMatchesResponses(t *testing.T) {
	srv := servertest.Start(t)
	s := loadSpec(t, srv.URL)
	const P, M, G, U = servertest.TokenPerson, servertest.TokenMain, servertest.TokenProgrammer, servertest.TokenSub
	rec := s.want(201, call{method: "POST", path: "/v1/requests", token: G, body: refundCall("p-1"), header: map[string]string{"Idempotency-Key": "k-1"}})
	id := "/v1/requests/" + rec["id"].(string)
	s.want(200, call{method: "POST", path: "/v1/requests", token: G, body: refundCall("p-1"), header: map[string]string{"Idempotency-Key": "k-1"}})
	s.want(422, call{method: "POST", path: "/v1/requests", token: G, body: refundCall("p-2"), header: map[string]string{"Idempotency-Key": "k-1"}})
	s.want(200, call{method: "GET", path: id, token: G})
	s.want(200, call{method: "GET", path: "/v1/requests?status=pending&limit=10", token: M})
	s.want(200, call{method: "POST", path: id, token: M, body: map[string]any{"expected": 0, "decision": "allow", "reason": "Fine by me."}})
	s.want(409, call{method: "POST", path: id, token: P, body: map[string]any{"expected": 0, "decision": "allow"}})
	done := s.want(200, call{method: "POST", path: id, token: P, body: map[string]any{"expected": 1, "decision": "allow", "scope": "lifetime"}})
	s.want(200, call{method: "GET", path: id + "?wait=1s", token: G})
	s.want(200, call{method: "POST", path: id + "/claim", token: G, body: map[string]any{"call_digest": done["call_digest"]}})
	p := s.want(409, call{method: "POST", path: id + "/claim", token: G, body: map[string]any{"call_digest": done["call_digest"]}})
	if p["reason"] != "already_claimed" {
		t.Errorf("second claim: reason %v, want already_claimed", p["reason"])
	}
	s.want(409, call{method: "POST", path: id + "/cancel", token: G})
	s.want(400, call{method: "POST", path: "/v1/requests", token: G, body: `{"tool":"x","arguments":{},"colour":"red"}`, badRequest: true})
	s.want(400, call{method: "GET", path: "/v1/requests?status=bogus", token: M, badRequest: true})
	s.want(401, call{method: "GET", path: id, token: "nope", badRequest: true})
	s.want(403, call{method: "POST", path: "/v1/requests", token: P, body: refundCall("p-3")})
	s.want(404, call{method: "GET", path: "/v1/requests/req_01J0000000000000000000000X", token: G})
	s.want(404, call{method: "GET", path: id, token: U})
	s.want(413, call{method: "POST", path: "/v1/requests", token: G, body: `{"tool":"x","arguments":{"a":"` + strings.Repeat("a", 1<<20) + `"}}`, badRequest: true})
	checkGrantsAndShell(t, s)
	checkAgentsAndRules(t, s)
	s.stream(call{method: "GET", path: "/v1/events", token: P})
	s.want(200, call{method: "GET", path: "/healthz"})
	s.want(200, call{method: "GET", path: "/readyz"})
	s.want(200, call{method: "GET", path: "/"})
	s.want(200, call{method: "GET", path: "/inbox/app.js"})
	s.want(404, call{method: "GET", path: "/inbox/nothing.js"})
	s.want(400, call{method: "GET", path: "/v1/rpc", token: P}) // not a WebSocket upgrade
	s.want(401, call{method: "GET", path: "/v1/rpc", badRequest: true})
	s.want(404, call{method: "GET", path: "/d/not-a-token"}) // decision links are off without public_url
	s.want(401, call{method: "POST", path: "/v1/slack/interactions", body: "payload=%7B%7D", badRequest: true,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	s.do(call{method: "GET", path: "/metrics"})
}

// checkGrantsAndShell covers a shell request's stages, the grant its
// lifetime allow of a stage leaves (match.shell_prefix), and the grant
// list and revoke.
func checkGrantsAndShell(t *testing.T, s *spec) {
	const P, M = servertest.TokenPerson, servertest.TokenMain
	cmd := "ls -la && git status"
	rec := s.want(201, call{method: "POST", path: "/v1/requests", token: M, body: map[string]any{"tool": "Bash",
		"arguments": map[string]any{"command": cmd}, "subject": map[string]any{"kind": "shell", "command": cmd}}})
	rec = s.want(200, call{method: "POST", path: "/v1/requests/" + rec["id"].(string), token: P,
		body: map[string]any{"expected": 0, "decision": "allow", "scope": "lifetime"}})
	if rec["current_stage"] != 1.0 || rec["status"] != "pending" {
		t.Fatalf("after the first stage: current_stage %v, status %v", rec["current_stage"], rec["status"])
	}
	page := s.want(200, call{method: "GET", path: "/v1/grants?agent=agt_main", token: P})
	var shellGrant string
	for _, g := range page["items"].([]any) {
		if g := g.(map[string]any); g["match"] != nil {
			shellGrant = g["id"].(string)
		}
	}
	if shellGrant == "" {
		t.Fatalf("no grant with match.shell_prefix in %v", page)
	}
	s.want(200, call{method: "DELETE", path: "/v1/grants/" + shellGrant, token: P})
	s.want(404, call{method: "DELETE", path: "/v1/grants/grt_01J0000000000000000000000X", token: P})
}

// checkAgentsAndRules registers a subagent through an approved spawn
// request, retires it, and keeps, lists and deletes a rule.
func checkAgentsAndRules(t *testing.T, s *spec) {
	const P, M, G = servertest.TokenPerson, servertest.TokenMain, servertest.TokenProgrammer
	s.want(403, call{method: "POST", path: "/v1/agents", token: G, body: map[string]any{"role": "helper"}})
	spawn := s.want(201, call{method: "POST", path: "/v1/requests", token: G, body: map[string]any{
		"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{}}})
	id := "/v1/requests/" + spawn["id"].(string)
	s.want(200, call{method: "POST", path: id, token: M, body: map[string]any{"expected": 0, "decision": "allow"}})
	s.want(200, call{method: "POST", path: id, token: P, body: map[string]any{"expected": 1, "decision": "allow"}})
	reg := s.want(201, call{method: "POST", path: "/v1/agents", token: G, body: map[string]any{"role": "helper", "review_timeout": "1m", "request_id": spawn["id"]}})
	agent := reg["agent"].(map[string]any)["id"].(string)
	s.want(200, call{method: "DELETE", path: "/v1/agents/" + agent, token: P})
	rule := s.want(201, call{method: "POST", path: "/v1/agents/agt_programmer/rules", token: P, body: map[string]any{"text": "Refunds under 50 GBP are fine.", "effect": "allow"}})
	s.want(200, call{method: "GET", path: "/v1/agents/agt_programmer/rules", token: P})
	s.want(204, call{method: "DELETE", path: "/v1/agents/agt_programmer/rules/" + rule["id"].(string), token: P})
}

// routePattern finds the patterns the server registers in its source.
var routePattern = regexp.MustCompile(`"(GET|POST|PUT|PATCH|DELETE) (/[^" ]*)"`)

// TestOpenAPICoversEveryRoute: every route httpapi registers is in the
// document, and every path and method of the document is served.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	srv := servertest.Start(t)
	s := loadSpec(t, srv.URL)
	documented := map[string]bool{}
	for path, item := range s.doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+sameParams(path)] = true
			s.served(method, path)
		}
	}
	for _, r := range registeredRoutes(t) {
		if !documented[r] {
			t.Errorf("route %q is served but not in openapi.json", r)
		}
	}
}

// sameParams writes a path so that a ServeMux pattern and an OpenAPI path
// compare: every wildcard as {}, a subtree ("/inbox/") as one wildcard
// below it, and "/{$}" (exactly /) as "/".
func sameParams(path string) string {
	path = strings.TrimSuffix(path, "{$}")
	if path != "/" && strings.HasSuffix(path, "/") {
		path += "{}"
	}
	return regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "{}")
}

// served fails when method path answers "no such endpoint" or 405.
func (s *spec) served(method, path string) {
	s.t.Helper()
	concrete := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "x")
	req, _ := http.NewRequest(method, s.url+concrete, nil)
	if path == "/v1/events" {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req = req.WithContext(ctx)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct{ Detail string }
	_ = json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&p)
	if resp.StatusCode == http.StatusMethodNotAllowed || p.Detail == "no such endpoint" {
		s.t.Errorf("%s %s is in openapi.json but not served: %d %s", method, path, resp.StatusCode, p.Detail)
	}
}

// registeredRoutes reads the route patterns of httpapi's source files
// (its own and its subpackages').
func registeredRoutes(t *testing.T) []string {
	var out []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range routePattern.FindAllStringSubmatch(string(src), -1) {
			out = append(out, m[1]+" "+sameParams(m[2]))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	if len(out) < 10 {
		t.Fatalf("found only %d routes in httpapi's source: %v", len(out), out)
	}
	return slices.Compact(out)
}
