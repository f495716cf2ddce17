package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// Black-box tests of the HTTP API against SPEC §2–§5. They talk HTTP to a
// real server (servertest) and use only net/http and encoding/json.

// Tokens of acmeYAML.
const (
	tokPerson     = "tok-person"      // person:u-1
	tokPerson2    = "tok-person2"     // person:u-2 (another member)
	tokAdmin      = "tok-admin"       // service:ops, admin
	tokMain       = "tok-main"        // agent:agt_main (top, member u-1)
	tokProg       = "tok-prog"        // agent:agt_programmer (under agt_main)
	tokSub        = "tok-sub"         // agent:agt_sub (under agt_programmer)
	tokOther      = "tok-other"       // agent:agt_other (member u-2)
	tokNoPolicy   = "tok-nopolicy"    // agent:agt_nopolicy (member u-3, no policy)
	tokQuickChild = "tok-quickchild"  // agent:agt_qchild (under agt_quick, review_timeout 1s)
	tokNoWrite    = "tok-nowrite"     // agent:agt_main without requests:write
	tokNoRead     = "tok-noread"      // agent:agt_main with requests:write only
	tokPersonRO   = "tok-person-ro"   // person:u-1 with approvals:read only
	tokPersonNone = "tok-person-none" // person:u-1 with no scope
	tokPersonW    = "tok-person-w"    // person:u-1 with requests:write too
	tokX          = "tok-x"           // agent:agt_x of tenant globex
	tokXPerson    = "tok-x-person"    // person:v-1 of tenant globex
)

// acmeYAML is a tenant with deny patterns, a second member, a member with
// no policy, an admin token, tokens lacking scopes, an agent whose review
// times out after 1s, and a second tenant.
const acmeYAML = `tenants:
  - id: acme
    request_timeout: 1h
    approval_ttl: 5m
    read_rules: ["tools.call:read_*", "apps.call:conn-7/list_*"]
    members:
      - id: u-1
        policy: {allow: ["*"], deny: ["tools.call:drop_*", "apps.call:*/delete_*"]}
      - id: u-2
        policy: {allow: ["tools.call:*"]}
      - id: u-3
    agents:
      - {id: agt_main, member: u-1, role: "Coordinates."}
      - {id: agt_programmer, member: u-1, parent: agt_main, rules: ["Reading files in the repository is always fine."]}
      - {id: agt_sub, member: u-1, parent: agt_programmer}
      - {id: agt_other, member: u-2}
      - {id: agt_nopolicy, member: u-3}
      - {id: agt_quick, member: u-1, review_timeout: 1s}
      - {id: agt_qchild, member: u-1, parent: agt_quick}
    tokens:
      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-person2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: tok-admin, principal: "service:ops", scopes: [admin]}
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-prog, principal: "agent:agt_programmer", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-sub, principal: "agent:agt_sub", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-other, principal: "agent:agt_other", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-nopolicy, principal: "agent:agt_nopolicy", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-quickchild, principal: "agent:agt_qchild", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-nowrite, principal: "agent:agt_main", scopes: [approvals:read, approvals:write]}
      - {token: tok-noread, principal: "agent:agt_main", scopes: [requests:write]}
      - {token: tok-person-ro, principal: "person:u-1", scopes: [approvals:read]}
      - {token: tok-person-none, principal: "person:u-1", scopes: []}
      - {token: tok-person-w, principal: "person:u-1", scopes: [requests:write, approvals:read, approvals:write]}
  - id: globex
    members:
      - {id: v-1, policy: {allow: ["*"]}}
    agents:
      - {id: agt_x, member: v-1}
    tokens:
      - {token: tok-x, principal: "agent:agt_x", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-x-person, principal: "person:v-1", scopes: [approvals:read, approvals:write]}
`

// startAcme runs a server with acmeYAML (plus extra tenant settings when
// the caller rewrites it).
func startAcme(t *testing.T) string {
	t.Helper()
	return servertest.Start(t, servertest.WithConfig(acmeYAML)).URL
}

// startDemo runs the demo tenant.
func startDemo(t *testing.T) string {
	t.Helper()
	return servertest.Start(t).URL
}

// client talks to one server as one token.
type client struct {
	t     *testing.T
	url   string
	token string
}

func newClient(t *testing.T, url, token string) *client { return &client{t: t, url: url, token: token} }

// resp is one HTTP answer.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any // the decoded JSON object, if any
}

// do sends body (nil: none; []byte or string: as is; anything else:
// JSON-encoded) with extra headers (name, value pairs), and checks that
// every response carries X-Request-ID.
func (c *client) do(method, path string, body any, headers ...string) resp {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.t.Fatalf("marshal body: %v", err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatalf("new request: %v", err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	hr, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer hr.Body.Close()
	raw, _ := io.ReadAll(hr.Body)
	r := resp{status: hr.StatusCode, header: hr.Header, raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '{' {
		_ = json.Unmarshal(raw, &r.body)
	}
	if hr.Header.Get("X-Request-ID") == "" {
		c.t.Errorf("%s %s: response has no X-Request-ID header", method, path)
	}
	return r
}

// want fails the test unless r has status code.
func (r resp) want(t *testing.T, what string, code int) resp {
	t.Helper()
	if r.status != code {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, code, r.raw)
	}
	return r
}

// wantProblem checks that r is a problem+json with this status and error
// code, and the field when field is not "".
func (r resp) wantProblem(t *testing.T, what string, code int, errCode, field string) {
	t.Helper()
	if r.status != code {
		t.Errorf("%s: status %d, want %d; body %s", what, r.status, code, r.raw)
		return
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("%s: Content-Type %q, want application/problem+json", what, ct)
	}
	for _, k := range []string{"type", "title", "status", "detail", "error"} {
		if _, ok := r.body[k]; !ok {
			t.Errorf("%s: problem lacks %q: %s", what, k, r.raw)
		}
	}
	if got := num(r.body["status"]); got != code {
		t.Errorf("%s: problem status %d, want %d", what, got, code)
	}
	if got := str(r.body["error"]); got != errCode {
		t.Errorf("%s: error %q, want %q; body %s", what, got, errCode, r.raw)
	}
	if field != "" {
		if got := str(r.body["field"]); got != field {
			t.Errorf("%s: field %q, want %q; body %s", what, got, field, r.raw)
		}
	}
}

// submit posts a request body and fails unless the answer is 201.
func (c *client) submit(body map[string]any) map[string]any {
	c.t.Helper()
	return c.do("POST", "/v1/requests", body).want(c.t, "submit", http.StatusCreated).body
}

// pending submits a call that no step 1–4 decides (tool "deploy").
func (c *client) pending(extra ...any) map[string]any {
	c.t.Helper()
	body := map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	rec := c.submit(body)
	if got := str(rec["status"]); got != "pending" {
		c.t.Fatalf("submit %v: status %q, want pending; record %v", body, got, rec)
	}
	return rec
}

// get reads a request and fails unless 200.
func (c *client) get(id string) map[string]any {
	c.t.Helper()
	return c.do("GET", "/v1/requests/"+id, nil).want(c.t, "get "+id, http.StatusOK).body
}

// answer posts an answer at the record's current revision.
func (c *client) answer(rec map[string]any, decision, scope string, extra ...any) resp {
	c.t.Helper()
	body := map[string]any{"expected": num(rec["revision"]), "decision": decision}
	if scope != "" {
		body["scope"] = scope
	}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	return c.do("POST", "/v1/requests/"+str(rec["id"]), body)
}

// list reads an inbox page.
func (c *client) list(query string) (items []map[string]any, next string, r resp) {
	c.t.Helper()
	r = c.do("GET", "/v1/requests"+query, nil)
	if r.status != http.StatusOK {
		return nil, "", r
	}
	return objects(r.body["items"]), str(r.body["next_cursor"]), r
}

// ids returns the ids of items.
func ids(items []map[string]any) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, str(it["id"]))
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// eventually polls f until it returns true or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, f func() bool) {
	t.Helper()
	testutil.Eventually(t, within, f, what)
}

// together runs fn(0) … fn(n-1) in goroutines released at the same moment,
// and returns when all have finished.
func together(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func objects(v any) []map[string]any {
	xs, _ := v.([]any)
	out := make([]map[string]any, 0, len(xs))
	for _, x := range xs {
		out = append(out, obj(x))
	}
	return out
}

// by returns decision.by of a record as "kind/id".
func by(rec map[string]any) string {
	b := obj(obj(rec["decision"])["by"])
	return str(b["kind"]) + "/" + str(b["id"])
}

// ts parses an RFC 3339 UTC time with Z.
func ts(t *testing.T, what string, v any) time.Time {
	t.Helper()
	s := str(v)
	if !strings.HasSuffix(s, "Z") {
		t.Errorf("%s: time %q does not end in Z", what, s)
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%s: time %q: %v", what, s, err)
	}
	return tm
}

var (
	reqIDPattern   = regexp.MustCompile(`^req_[0-9A-HJKMNP-TV-Z]{26}$`)
	grantIDPattern = regexp.MustCompile(`^grt_[0-9A-HJKMNP-TV-Z]{26}$`)
	ruleIDPattern  = regexp.MustCompile(`^rul_[0-9A-HJKMNP-TV-Z]{26}$`)
	agentIDPattern = regexp.MustCompile(`^agt_[0-9A-HJKMNP-TV-Z]{26}$`)
)

// wantDigest computes SPEC §4's call_digest independently: the JCS form
// of the binding. encoding/json sorts map keys and writes these simple
// values (ASCII strings without <>&, small integers) exactly as JCS does.
func wantDigest(t *testing.T, tenant, agent, session, turn, callID, action, target string, args map[string]any) string {
	t.Helper()
	b := map[string]any{"tenant": tenant, "agent": agent, "session": session, "turn": turn, "tool_call_id": callID,
		"capability": map[string]any{"action": action, "target": target}, "arguments": args, "connection": nil}
	j, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(j)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// adminCount returns how many requests the admin sees (to check that bad
// input created nothing).
func adminCount(t *testing.T, url string) int {
	t.Helper()
	items, _, r := newClient(t, url, tokAdmin).list("?limit=500")
	r.want(t, "admin list", http.StatusOK)
	return len(items)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// waitHeld waits until the server at url holds at least n long-polls (its
// countersign_longpolls_waiting gauge): an event, not a sleep.
func waitHeld(t *testing.T, url string, n int) {
	t.Helper()
	eventually(t, 10*time.Second, "a held long-poll", func() bool {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "countersign_longpolls_waiting "); ok {
				var held float64
				_, _ = fmt.Sscan(v, &held)
				return held >= float64(n)
			}
		}
		return false
	})
}
