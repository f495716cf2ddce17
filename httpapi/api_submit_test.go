package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestAPISubmitRecord checks the 201 record of a pending submit against
// SPEC §4: snake_case fields, revision 0, chain, approver, the digest, the
// effective timeout and deadline_at.
func TestAPISubmitRecord(t *testing.T) {
	t.Parallel()
	url := startDemo(t)
	sub := newClient(t, url, "dev-sub")
	args := map[string]any{"payment_id": "payment_123", "amount": 4900, "currency": "GBP"}
	r := sub.do("POST", "/v1/requests", map[string]any{"tool": "issue_refund", "arguments": args, "timeout": "30m",
		"reason": "Duplicate charge.", "session": "ses-1", "turn": "t-77", "tool_call_id": "call-9"})
	r.want(t, "submit", http.StatusCreated)
	if ct := r.header.Get("Content-Type"); ct != "application/json" && ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	rec := r.body
	for _, k := range []string{"id", "tenant", "agent", "session", "turn", "tool_call_id", "capability", "tool", "arguments",
		"subject", "reason", "call_digest", "timeout", "status", "approver", "chain", "endorsements", "judge_escalated",
		"reviewer_reason", "revision", "created_at", "deadline_at", "claimed_at", "decision"} {
		if _, ok := rec[k]; !ok {
			t.Errorf("record lacks field %q: %s", k, r.raw)
		}
	}
	checks := []struct{ name, got, want string }{
		{"tenant", str(rec["tenant"]), "demo"},
		{"agent", str(rec["agent"]), "agt_sub"},
		{"session", str(rec["session"]), "ses-1"},
		{"turn", str(rec["turn"]), "t-77"},
		{"tool_call_id", str(rec["tool_call_id"]), "call-9"},
		{"tool", str(rec["tool"]), "issue_refund"},
		{"capability", jsonString(rec["capability"]), `{"action":"tools.call","target":"issue_refund"}`},
		{"subject", jsonString(rec["subject"]), `{"kind":"tool"}`},
		{"reason", str(rec["reason"]), "Duplicate charge."},
		{"status", str(rec["status"]), "pending"},
		{"timeout", str(rec["timeout"]), "30m"},
		{"approver", jsonString(rec["approver"]), `{"id":"agt_programmer","kind":"agent"}`},
		{"chain", jsonString(rec["chain"]), `["agt_main","agt_programmer","agt_sub"]`},
		{"endorsements", jsonString(rec["endorsements"]), `[]`},
		{"judge_escalated", jsonString(rec["judge_escalated"]), `false`},
		{"reviewer_reason", jsonString(rec["reviewer_reason"]), `null`},
		{"revision", jsonString(rec["revision"]), `0`},
		{"claimed_at", jsonString(rec["claimed_at"]), `null`},
		{"decision", jsonString(rec["decision"]), `null`},
		{"arguments", jsonString(rec["arguments"]), jsonString(args)},
		{"call_digest", str(rec["call_digest"]), wantDigest(t, "demo", "agt_sub", "ses-1", "t-77", "call-9", "tools.call", "issue_refund", args)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if id := str(rec["id"]); !reqIDPattern.MatchString(id) {
		t.Errorf("id %q, want req_<ULID>", id)
	}
	created, deadline := ts(t, "created_at", rec["created_at"]), ts(t, "deadline_at", rec["deadline_at"])
	if got := deadline.Sub(created); got != 30*time.Minute {
		t.Errorf("deadline_at - created_at = %v, want 30m", got)
	}
	if d := time.Since(created); d < -5*time.Second || d > time.Minute {
		t.Errorf("created_at %v is not now", created)
	}
	// GET returns the same record.
	if got := sub.get(str(rec["id"])); !reflect.DeepEqual(got, rec) {
		t.Errorf("GET record differs from the 201:\n got %v\nwant %v", got, rec)
	}
}

// TestAPISubmitArgumentsKeptAsReceived: arguments are stored exactly as
// received (SPEC §4): key order and number spelling survive.
func TestAPISubmitArgumentsKeptAsReceived(t *testing.T) {
	t.Parallel()
	url := startDemo(t)
	r := newClient(t, url, "dev-main").do("POST", "/v1/requests", `{"tool":"deploy","arguments":{"z":1,"a":{"y":2,"b":[3,1.50]}}}`)
	r.want(t, "submit", http.StatusCreated)
	var rec struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(r.raw, &rec); err != nil {
		t.Fatal(err)
	}
	// Whitespace is not content; order of keys and the literal 1.50 are.
	if got, want := string(rec.Arguments), `{"z":1,"a":{"y":2,"b":[3,1.50]}}`; got != want {
		t.Errorf("arguments = %s, want %s", got, want)
	}
}

// TestAPISubmitTimeout: missing → request_timeout, larger → capped, and
// deadline_at = created_at + timeout (SPEC §4).
func TestAPISubmitTimeout(t *testing.T) {
	t.Parallel()
	demo := newClient(t, startDemo(t), "dev-main")
	acme := newClient(t, startAcme(t), tokMain)
	for _, tc := range []struct {
		name    string
		c       *client
		timeout string
		want    time.Duration
	}{
		{"default is request_timeout 24h", demo, "", 24 * time.Hour},
		{"shorter kept", demo, "30m", 30 * time.Minute},
		{"odd units kept", demo, "90s", 90 * time.Second},
		{"exactly 1s", demo, "1s", time.Second},
		{"larger capped to 24h", demo, "48h", 24 * time.Hour},
		{"tenant request_timeout 1h is the default", acme, "", time.Hour},
		{"capped to tenant request_timeout 1h", acme, "2h", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"tool": "deploy", "arguments": map[string]any{}}
			if tc.timeout != "" {
				body["timeout"] = tc.timeout
			}
			rec := tc.c.submit(body)
			got, err := time.ParseDuration(str(rec["timeout"]))
			if err != nil || got != tc.want {
				t.Errorf("timeout = %q, want %v", rec["timeout"], tc.want)
			}
			d := ts(t, "deadline_at", rec["deadline_at"]).Sub(ts(t, "created_at", rec["created_at"]))
			if d != tc.want {
				t.Errorf("deadline_at - created_at = %v, want %v", d, tc.want)
			}
		})
	}
}

// TestAPISubmitCapability: the capability form and the tool shorthand.
func TestAPISubmitCapability(t *testing.T) {
	t.Parallel()
	c := newClient(t, startDemo(t), "dev-main")
	for _, tc := range []struct {
		name     string
		body     map[string]any
		wantCap  string
		wantTool string
	}{
		{"tool shorthand", map[string]any{"tool": "send_email", "arguments": map[string]any{}},
			`{"action":"tools.call","target":"send_email"}`, "send_email"},
		{"tools.call capability", map[string]any{"capability": map[string]any{"action": "tools.call", "target": "send_email"}, "arguments": map[string]any{}},
			`{"action":"tools.call","target":"send_email"}`, "send_email"},
		{"apps.call capability", map[string]any{"capability": map[string]any{"action": "apps.call", "target": "conn-1/send"}, "arguments": map[string]any{}},
			`{"action":"apps.call","target":"conn-1/send"}`, ""},
		{"agents.delegate capability", map[string]any{"capability": map[string]any{"action": "agents.delegate", "target": "agt_programmer"}, "arguments": map[string]any{}},
			`{"action":"agents.delegate","target":"agt_programmer"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := c.submit(tc.body)
			if got := jsonString(rec["capability"]); got != tc.wantCap {
				t.Errorf("capability = %s, want %s", got, tc.wantCap)
			}
			if got := str(rec["tool"]); got != tc.wantTool {
				t.Errorf("tool = %q, want %q", got, tc.wantTool)
			}
			if got := str(rec["status"]); got != "pending" {
				t.Errorf("status = %q, want pending", got)
			}
			if got := jsonString(rec["approver"]); got != `{"id":"u-1","kind":"person"}` {
				t.Errorf("approver = %s, want person u-1", got)
			}
			if got := jsonString(rec["chain"]); got != `["agt_main"]` {
				t.Errorf("chain = %s, want [agt_main]", got)
			}
		})
	}
}

// TestAPISubmitDecidedAtOnce: steps 1–2 decide in the 201 itself (SPEC §2,
// §4): policy deny with by.id the member, reads with by.id the pattern;
// scope once; approver null; expires_at on approvals only.
func TestAPISubmitDecidedAtOnce(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	tc := func(tok string) *client { return newClient(t, url, tok) }
	capOf := func(action, target string) map[string]any { return map[string]any{"action": action, "target": target} }
	for _, c := range []struct {
		name       string
		c          *client
		body       map[string]any
		wantStatus string
		wantBy     string
	}{
		{"deny pattern", tc(tokMain), map[string]any{"tool": "drop_table"}, "denied", "policy/u-1"},
		{"deny pattern wins over allow *", tc(tokMain), map[string]any{"capability": capOf("apps.call", "conn-7/delete_all")}, "denied", "policy/u-1"},
		{"deny wins over read_rules", tc(tokMain), map[string]any{"capability": capOf("apps.call", "conn-7/list_x/delete_y")}, "denied", "policy/u-1"},
		{"no allow pattern matches", tc(tokOther), map[string]any{"capability": capOf("apps.call", "conn-1/send")}, "denied", "policy/u-2"},
		{"member without policy", tc(tokNoPolicy), map[string]any{"tool": "read_file"}, "denied", "policy/u-3"},
		{"policy applies to unknown subject kinds", tc(tokMain), map[string]any{"tool": "drop_x", "subject": map[string]any{"kind": "browser"}}, "denied", "policy/u-1"},
		{"read tool", tc(tokMain), map[string]any{"tool": "read_file"}, "approved", "read/tools.call:read_*"},
		{"read for a subagent", tc(tokSub), map[string]any{"tool": "read_file", "session": "s"}, "approved", "read/tools.call:read_*"},
		{"read app, * spans /", tc(tokMain), map[string]any{"capability": capOf("apps.call", "conn-7/list_a/b:c")}, "approved", "read/apps.call:conn-7/list_*"},
		{"explicit subject kind tool", tc(tokMain), map[string]any{"tool": "read_file", "subject": map[string]any{"kind": "tool"}}, "approved", "read/tools.call:read_*"},
		{"matching is case-sensitive", tc(tokMain), map[string]any{"tool": "Read_file"}, "pending", ""},
		{"patterns match the whole string", tc(tokMain), map[string]any{"tool": "xread_file"}, "pending", ""},
		{"unknown subject kind skips reads", tc(tokMain), map[string]any{"tool": "read_file", "subject": map[string]any{"kind": "browser"}}, "pending", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.body["arguments"] = map[string]any{"path": "x"}
			rec := c.c.submit(c.body)
			if got := str(rec["status"]); got != c.wantStatus {
				t.Fatalf("status = %q, want %q; record %v", got, c.wantStatus, rec)
			}
			if c.wantStatus == "pending" {
				if rec["decision"] != nil || rec["approver"] == nil {
					t.Errorf("pending record: decision %v, approver %v; want null and set", rec["decision"], rec["approver"])
				}
				return
			}
			checkAutoDecision(t, rec, c.wantStatus, c.wantBy, 5*time.Minute)
		})
	}
}

// checkAutoDecision checks a decision made by steps 1–4 (SPEC §4).
func checkAutoDecision(t *testing.T, rec map[string]any, status, wantBy string, ttl time.Duration) {
	t.Helper()
	d := obj(rec["decision"])
	if d == nil {
		t.Fatalf("decision is null; record %v", rec)
	}
	if got := str(d["status"]); got != status {
		t.Errorf("decision.status = %q, want %q", got, status)
	}
	if got := by(rec); got != wantBy {
		t.Errorf("decision.by = %s, want %s", got, wantBy)
	}
	if got := str(d["scope"]); got != "once" {
		t.Errorf("decision.scope = %q, want once", got)
	}
	if v, ok := rec["approver"]; !ok || v != nil {
		t.Errorf("approver = %v (present %v), want null", v, ok)
	}
	if got := num(rec["revision"]); got != 0 {
		t.Errorf("revision = %d, want 0", got)
	}
	decided := ts(t, "decided_at", d["decided_at"])
	exp, has := d["expires_at"]
	switch {
	case status == "approved" && !has:
		t.Errorf("approval has no expires_at")
	case status == "approved":
		if got := ts(t, "expires_at", exp).Sub(decided); got != ttl {
			t.Errorf("expires_at - decided_at = %v, want %v", got, ttl)
		}
	case has && exp != nil:
		t.Errorf("a %s decision has expires_at %v; approvals only", status, exp)
	}
}

// TestAPISubmitUnknownSubjectKind: a request of an unknown subject kind
// skips steps 2–4, always reaches a decider, and may only be answered
// with scope once (SPEC §2).
func TestAPISubmitUnknownSubjectKind(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)

	// A lifetime allow grant for deploy does not decide an unknown kind.
	g := main.pending("session", "s1")
	person.answer(g, "allow", "lifetime").want(t, "grant deploy for lifetime", http.StatusOK)
	if got := str(main.submit(map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}})["status"]); got != "approved" {
		t.Fatalf("deploy after a lifetime grant: %q, want approved", got)
	}
	rec := main.submit(map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}, "subject": map[string]any{"kind": "browser"}})
	if got := str(rec["status"]); got != "pending" {
		t.Fatalf("unknown subject kind with a grant: %q, want pending", got)
	}
	if got := jsonString(rec["subject"]); got != `{"kind":"browser"}` {
		t.Errorf("subject = %s, want {kind: browser}", got)
	}
	for _, scope := range []string{"session", "lifetime"} {
		person.answer(rec, "allow", scope).wantProblem(t, "allow scope "+scope, http.StatusBadRequest, "InvalidRequest", "scope")
		person.answer(rec, "deny", scope).wantProblem(t, "deny scope "+scope, http.StatusBadRequest, "InvalidRequest", "scope")
	}
	if got := num(person.get(str(rec["id"]))["revision"]); got != 0 {
		t.Errorf("refused answers changed revision to %d", got)
	}
	got := person.answer(rec, "allow", "once").want(t, "allow once", http.StatusOK).body
	if str(got["status"]) != "approved" || by(got) != "person/u-1" {
		t.Errorf("after allow once: status %q by %s, want approved by person/u-1", got["status"], by(got))
	}
}

// TestAPISubmitConnectionAndOpaqueIDs: the digest binds the connection
// {id, revision}; session, turn and tool_call_id take up to 256 bytes.
func TestAPISubmitConnectionAndOpaqueIDs(t *testing.T) {
	t.Parallel()
	c := newClient(t, startDemo(t), "dev-main")
	args := map[string]any{"to": "a@example.com"}
	digests := map[string]bool{}
	for _, rev := range []int{1, 2} {
		rec := c.submit(map[string]any{"capability": map[string]any{"action": "apps.call", "target": "conn-1/send"},
			"arguments": args, "connection": map[string]any{"id": "conn-1", "revision": rev}})
		b := map[string]any{"tenant": "demo", "agent": "agt_main", "session": "", "turn": "", "tool_call_id": "",
			"capability": map[string]any{"action": "apps.call", "target": "conn-1/send"}, "arguments": args,
			"connection": map[string]any{"id": "conn-1", "revision": rev}}
		j, _ := json.Marshal(b)
		sum := sha256.Sum256(j)
		if got, want := str(rec["call_digest"]), "sha256:"+hex.EncodeToString(sum[:]); got != want {
			t.Errorf("revision %d: call_digest %s, want %s", rev, got, want)
		}
		if got := jsonString(rec["connection"]); got != fmt.Sprintf(`{"id":"conn-1","revision":%d}`, rev) {
			t.Errorf("connection = %s", got)
		}
		digests[str(rec["call_digest"])] = true
	}
	if len(digests) != 2 {
		t.Errorf("a new connection revision kept the digest")
	}
	max := strings.Repeat("s", 256)
	rec := c.submit(map[string]any{"tool": "deploy", "arguments": map[string]any{}, "session": max, "turn": max, "tool_call_id": max})
	if str(rec["session"]) != max || str(rec["turn"]) != max || str(rec["tool_call_id"]) != max {
		t.Errorf("256-byte opaque ids not kept")
	}
}
