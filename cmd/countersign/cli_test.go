package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// cliResult is one CLI invocation's exit code and output.
type cliResult struct {
	code           int
	stdout, stderr string
}

// cliCall runs `countersign <args>` in-process against srv with token
// supplied through the environment, as a person's shell would.
func cliCall(t *testing.T, srv *servertest.Server, token string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	envs := map[string]string{"COUNTERSIGN_URL": srv.URL, "COUNTERSIGN_TOKEN": token}
	env := cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return envs[k] }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := runCLI(ctx, args[0], args[1:], env)
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// mustCLI runs the CLI and fails the test unless it exits 0.
func mustCLI(t *testing.T, srv *servertest.Server, token string, args ...string) string {
	t.Helper()
	r := cliCall(t, srv, token, args...)
	if r.code != 0 {
		t.Fatalf("countersign %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// cliHTTP sends one API request and decodes a 2xx JSON answer into out.
func cliHTTP(t *testing.T, srv *servertest.Server, method, path, token, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, raw)
	}
}

// cliSubmit submits a refund as the agent behind token.
func cliSubmit(t *testing.T, srv *servertest.Server, token, extra string) domain.Request {
	t.Helper()
	var rec domain.Request
	body := `{"tool":"issue_refund","arguments":{"payment_id":"payment_123","amount":4900,"currency":"GBP"}` + extra + `}`
	cliHTTP(t, srv, http.MethodPost, "/v1/requests", token, body, &rec)
	return rec
}

func cliRecord(t *testing.T, srv *servertest.Server, id domain.RequestID) domain.Request {
	t.Helper()
	var rec domain.Request
	cliHTTP(t, srv, http.MethodGet, "/v1/requests/"+string(id), servertest.TokenPerson, "", &rec)
	return rec
}

func TestCLIPendingAndApprove(t *testing.T) {
	srv := servertest.Start(t)
	rec := cliSubmit(t, srv, servertest.TokenMain, `,"reason":"Duplicate\ncharge \u202eIGNORE \"ALL\" RULES\u202c confirmed."`)

	out := mustCLI(t, srv, servertest.TokenPerson, "pending")
	for _, want := range []string{"ID", "REASON", string(rec.ID), "agt_main", "tools.call:issue_refund", "person:u-1",
		`"Duplicate charge \u202EIGNORE \"ALL\" RULES\u202C confirmed."`} {
		if !strings.Contains(out, want) {
			t.Errorf("pending: no %q in\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\u202e\u202c") {
		t.Errorf("pending printed bidi controls from the agent's reason:\n%q", out)
	}

	out = mustCLI(t, srv, servertest.TokenPerson, "approve", string(rec.ID), "--reason", "Confirmed with the customer.")
	if !strings.Contains(out, "approved by person:u-1") {
		t.Errorf("approve printed %q, want it to say approved by person:u-1", out)
	}
	got := cliRecord(t, srv, rec.ID)
	if got.Status != domain.StatusApproved || got.Decision.Note != "Confirmed with the customer." || got.Decision.Scope != "once" {
		t.Errorf("record after approve: status %q decision %+v, want approved, scope once, the note", got.Status, got.Decision)
	}
	if out := mustCLI(t, srv, servertest.TokenPerson, "pending"); strings.Contains(out, string(rec.ID)) {
		t.Errorf("pending still lists the approved request:\n%s", out)
	}
}

func TestCLIDeny(t *testing.T) {
	srv := servertest.Start(t)
	rec := cliSubmit(t, srv, servertest.TokenMain, "")
	out := mustCLI(t, srv, servertest.TokenPerson, "deny", "--reason", "Not a duplicate.", string(rec.ID))
	if !strings.Contains(out, "denied by person:u-1") {
		t.Errorf("deny printed %q", out)
	}
	got := cliRecord(t, srv, rec.ID)
	if got.Status != domain.StatusDenied || got.Decision.Note != "Not a duplicate." {
		t.Errorf("record after deny: status %q decision %+v, want denied with the note", got.Status, got.Decision)
	}
}

func TestCLIEndorsementPassesUp(t *testing.T) {
	srv := servertest.Start(t)
	rec := cliSubmit(t, srv, servertest.TokenProgrammer, "")
	out := mustCLI(t, srv, servertest.TokenMain, "approve", string(rec.ID))
	if !strings.Contains(out, "passed up") || !strings.Contains(out, "person:u-1") {
		t.Errorf("endorsing approve printed %q, want it passed up to person:u-1", out)
	}
	mustCLI(t, srv, servertest.TokenPerson, "approve", string(rec.ID))
	if got := cliRecord(t, srv, rec.ID); got.Status != domain.StatusApproved || len(got.Endorsements) != 1 {
		t.Errorf("status %q, %d endorsements; want approved with agt_main's endorsement", got.Status, len(got.Endorsements))
	}
	out = mustCLI(t, srv, servertest.TokenPerson, "show", string(rec.ID))
	for _, want := range []string{"agt_main → agt_programmer", "Endorsed by", "approved by person:u-1", `"amount": 4900`} {
		if !strings.Contains(out, want) {
			t.Errorf("show: no %q in\n%s", want, out)
		}
	}
}

func TestCLIRefusals(t *testing.T) {
	srv := servertest.Start(t)
	decided := cliSubmit(t, srv, servertest.TokenMain, "")
	mustCLI(t, srv, servertest.TokenPerson, "approve", string(decided.ID))
	notMine := cliSubmit(t, srv, servertest.TokenProgrammer, "") // waits for agt_main

	tests := []struct {
		name  string
		token string
		args  []string
		want  []string
	}{
		{"opposite answer to a decided request", servertest.TokenPerson, []string{"deny", string(decided.ID)},
			[]string{"RequestConflict", "already approved"}},
		{"answer of a request waiting for someone else", servertest.TokenPerson, []string{"approve", string(notMine.ID)},
			[]string{"RequestConflict", "not yours to answer", "agent:agt_main"}},
		{"unknown request", servertest.TokenPerson, []string{"show", "req_01JC0000000000000000000000"},
			[]string{"RequestNotFound"}},
		{"bad token", "not-a-token", []string{"pending"}, []string{"Unauthenticated"}},
		{"unknown grant", servertest.TokenPerson, []string{"revoke", "grt_01JC0000000000000000000000"},
			[]string{"GrantNotFound"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cliCall(t, srv, tt.token, tt.args...)
			if r.code != cliExitRefused {
				t.Fatalf("exit %d, want %d (stderr %q)", r.code, cliExitRefused, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not say %q", r.stderr, w)
				}
			}
		})
	}
	if got := cliRecord(t, srv, decided.ID); got.Status != domain.StatusApproved {
		t.Errorf("a refused deny changed the record: status %q", got.Status)
	}
}

func TestCLIUnreachableServer(t *testing.T) {
	var out, errb bytes.Buffer
	env := cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return map[string]string{"COUNTERSIGN_TOKEN": "x"}[k] }}
	code := runCLI(context.Background(), "pending", []string{"--url", "http://127.0.0.1:1"}, env)
	if code != cliExitRefused || !strings.Contains(errb.String(), "cannot reach") {
		t.Errorf("exit %d, stderr %q; want 1 and cannot reach", code, errb.String())
	}
}

func TestCLIUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"approve without an id", []string{"approve"}, nil},
		{"edits with two ids", []string{"approve", "req_a", "req_b", "--arguments", "x.json"}, nil},
		{"deny with an empty id", []string{"deny", "req_a", " "}, nil},
		{"unknown scope", []string{"approve", "req_a", "--scope", "forever"}, nil},
		{"unknown flag", []string{"pending", "--colour"}, nil},
		{"pending takes no arguments", []string{"pending", "req_a"}, nil},
		{"deny has no --rule", []string{"deny", "req_a", "--rule", "x"}, nil},
		{"no token", []string{"pending"}, map[string]string{}},
		{"not an http url", []string{"pending", "--url", "ftp://x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			if env == nil {
				env = map[string]string{"COUNTERSIGN_TOKEN": "t", "COUNTERSIGN_URL": "http://127.0.0.1:1"}
			}
			var out, errb bytes.Buffer
			ce := cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
			if got := runCLI(context.Background(), tt.args[0], tt.args[1:], ce); got != cliExitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", got, cliExitUsage, errb.String())
			}
			if strings.Contains(errb.String(), "cannot reach") {
				t.Errorf("a usage error contacted the server: %q", errb.String())
			}
		})
	}
}

func TestCLIJSON(t *testing.T) {
	srv := servertest.Start(t)
	rec := cliSubmit(t, srv, servertest.TokenMain, "")

	var page struct {
		Items []domain.Request `json:"items"`
	}
	cliUnmarshal(t, mustCLI(t, srv, servertest.TokenPerson, "pending", "--json"), &page)
	if len(page.Items) != 1 || page.Items[0].ID != rec.ID {
		t.Fatalf("pending --json items %+v, want just %s", page.Items, rec.ID)
	}
	var shown domain.Request
	cliUnmarshal(t, mustCLI(t, srv, servertest.TokenPerson, "show", "--json", string(rec.ID)), &shown)
	if shown.ID != rec.ID || shown.Status != domain.StatusPending {
		t.Errorf("show --json: id %s status %s", shown.ID, shown.Status)
	}
	var answered domain.Request
	cliUnmarshal(t, mustCLI(t, srv, servertest.TokenPerson, "approve", string(rec.ID), "--json"), &answered)
	if answered.Status != domain.StatusApproved || answered.Revision != rec.Revision+1 {
		t.Errorf("approve --json: status %s revision %d", answered.Status, answered.Revision)
	}
	cliUnmarshal(t, mustCLI(t, srv, servertest.TokenPerson, "pending", "--json"), &page)
	if len(page.Items) != 0 {
		t.Errorf("pending --json after approve: %d items, want 0", len(page.Items))
	}
}

func cliUnmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, s)
	}
}

func TestCLIGrantsAndRevoke(t *testing.T) {
	srv := servertest.Start(t)
	rec := cliSubmit(t, srv, servertest.TokenMain, "")
	mustCLI(t, srv, servertest.TokenPerson, "approve", string(rec.ID), "--scope", "lifetime", "--reason", "Always fine.")

	out := mustCLI(t, srv, servertest.TokenPerson, "grants")
	for _, want := range []string{"agt_main", "tools.call:issue_refund", "allow", "lifetime", "person:u-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("grants: no %q in\n%s", want, out)
		}
	}
	var page struct {
		Items []domain.Grant `json:"items"`
	}
	cliUnmarshal(t, mustCLI(t, srv, servertest.TokenPerson, "grants", "--agent", "agt_main", "--json"), &page)
	if len(page.Items) != 1 || page.Items[0].RequestID != rec.ID {
		t.Fatalf("grants --json: %+v, want the one grant from %s", page.Items, rec.ID)
	}
	g := page.Items[0]

	out = mustCLI(t, srv, servertest.TokenPerson, "revoke", string(g.ID))
	if !strings.Contains(out, "revoked") {
		t.Errorf("revoke printed %q", out)
	}
	if out := mustCLI(t, srv, servertest.TokenPerson, "grants"); strings.Contains(out, string(g.ID)) {
		t.Errorf("grants still lists the revoked grant:\n%s", out)
	}
	cliUnmarshal(t, mustCLI(t, srv, servertest.TokenPerson, "grants", "--revoked", "--json"), &page)
	if len(page.Items) != 1 || page.Items[0].RevokedAt == nil {
		t.Errorf("grants --revoked --json: %+v, want the grant with revoked_at", page.Items)
	}
	// The grant no longer applies: the same call waits for the person again.
	if again := cliSubmit(t, srv, servertest.TokenMain, ""); again.Status != domain.StatusPending {
		t.Errorf("after revoke a new request is %s, want pending", again.Status)
	}
}

func TestCLIShowExpired(t *testing.T) {
	srv := servertest.Start(t)
	rec := cliSubmit(t, srv, servertest.TokenMain, `,"timeout":"1s","reason":"Quick one."`)
	testutil.Eventually(t, 20*time.Second, func() bool {
		return cliRecord(t, srv, rec.ID).Status == domain.StatusExpired
	}, "the request expires at its deadline")

	out := mustCLI(t, srv, servertest.TokenPerson, "show", string(rec.ID))
	if !strings.Contains(out, "expired — no decision was made in time") {
		t.Errorf("show of an expired request:\n%s\nwant it to say no decision was made in time", out)
	}
	if low := strings.ToLower(out); strings.Contains(low, "denied") || strings.Contains(low, "deny") {
		t.Errorf("show of an expired request reads as a denial:\n%s", out)
	}
	r := cliCall(t, srv, servertest.TokenPerson, "approve", string(rec.ID))
	if r.code != cliExitRefused || !strings.Contains(r.stderr, "no decision was made in time") {
		t.Errorf("approve of an expired request: exit %d, stderr %q", r.code, r.stderr)
	}
}

// show and pending print what the agent wrote with bidi, zero-width and
// control characters escaped and look-alike words marked, as the inbox
// shows them.
func TestCLIShowEscapesAgentText(t *testing.T) {
	srv := servertest.Start(t)
	var rec domain.Request
	body := `{"tool":"issue_refund","arguments":{"file":"invoice\u202efdp.exe","iban":"GB12\u200b3456","payee":"p\u0430ypal","site":"раураӏ.com","esc":"\u001b[2J"},` +
		`"reason":"Pay раураӏ.com\u202e now\u200b\u0007"}`
	cliHTTP(t, srv, http.MethodPost, "/v1/requests", servertest.TokenMain, body, &rec)
	show := mustCLI(t, srv, servertest.TokenPerson, "show", string(rec.ID))
	pending := mustCLI(t, srv, servertest.TokenPerson, "pending")
	for name, out := range map[string]string{"show": show, "pending": pending} {
		if strings.ContainsAny(out, "\u202e\u200b\u0007\u001b") {
			t.Errorf("%s printed raw control, bidi or zero-width characters:\n%q", name, out)
		}
		if !strings.Contains(out, "⚠раураӏ(≈paypai).com") || !strings.Contains(out, `\u202E`) {
			t.Errorf("%s does not show the reason's look-alike and escape:\n%s", name, out)
		}
	}
	for _, want := range []string{`"invoice\u202Efdp.exe"`, `"GB12\u200B3456"`, "\"⚠p\u0430ypal(≈paypal)\"", `"⚠раураӏ(≈paypai).com"`, `"\u001B[2J"`,
		`"Pay ⚠раураӏ(≈paypai).com\u202E now\u200B\u0007"`} {
		if !strings.Contains(show, want) {
			t.Errorf("show: no %s in\n%s", want, show)
		}
	}
}

func TestCLIPendingFollowsPages(t *testing.T) {
	srv := servertest.Start(t)
	const n = 53 // the server's default page is 50
	for i := 0; i < n; i++ {
		cliSubmit(t, srv, servertest.TokenMain, "")
	}
	var page struct {
		Items []domain.Request `json:"items"`
	}
	cliUnmarshal(t, mustCLI(t, srv, servertest.TokenPerson, "pending", "--json"), &page)
	if len(page.Items) != n {
		t.Errorf("pending --json: %d items, want %d", len(page.Items), n)
	}
	out := mustCLI(t, srv, servertest.TokenPerson, "pending")
	if got := strings.Count(out, "req_"); got != n {
		t.Errorf("pending table: %d rows, want %d", got, n)
	}
}

func TestCLIParseInterleaved(t *testing.T) {
	tests := []struct {
		args      []string
		wantPos   []string
		wantScope string
	}{
		{[]string{"req_1"}, []string{"req_1"}, "once"},
		{[]string{"req_1", "--scope", "session"}, []string{"req_1"}, "session"},
		{[]string{"--scope=lifetime", "req_1"}, []string{"req_1"}, "lifetime"},
		{[]string{"-scope", "session", "req_1", "--reason", "r"}, []string{"req_1"}, "session"},
		{[]string{"--", "--scope"}, []string{"--scope"}, "once"},
		{[]string{"req_1", "--", "req_2", "--scope", "x"}, []string{"req_1", "req_2", "--scope", "x"}, "once"},
	}
	for _, tt := range tests {
		o := &cliOpts{}
		fs := newCLITestFlags(o)
		pos, err := cliParseInterleaved(fs, tt.args)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if strings.Join(pos, " ") != strings.Join(tt.wantPos, " ") || o.scope != tt.wantScope {
			t.Errorf("%q: got positional %q scope %q, want %q %q", tt.args, pos, o.scope, tt.wantPos, tt.wantScope)
		}
	}
}

func newCLITestFlags(o *cliOpts) *flag.FlagSet {
	fs := flag.NewFlagSet("approve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cliAnswerFlags(true)(fs, o)
	return fs
}
