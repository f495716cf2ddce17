package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

const checkRunning = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}, {id: agt_b, member: u-1}]
    tokens:
      - {token: chk-admin, principal: "service:admin", scopes: [admin]}
      - {token: chk-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: chk-b, principal: "agent:agt_b", scopes: [requests:write]}
`

// The next file: u-2 added, agt_a now works for u-2, agt_b's token gone.
const checkNext = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}, {id: u-2, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-2}, {id: agt_b, member: u-1}]
    tokens:
      - {token: chk-admin, principal: "service:admin", scopes: [admin]}
      - {token: chk-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
`

func configCall(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := configCheck(ctx, args, cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }})
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "countersign.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// config check prints what a file changes against the running revision,
// without a token (or its hash) in the output.
func TestConfigCheckPrintsChanges(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfigFile(writeFile(t, checkRunning)))
	env := map[string]string{"COUNTERSIGN_URL": srv.URL, "COUNTERSIGN_TOKEN": "chk-admin"}
	r := configCall(t, env, "check", writeFile(t, checkNext))
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"valid (sha256 ", "running revision 1 ", "tenant acme: + member u-2",
		"tenant acme: ~ agent agt_a", "tenant acme: - token agent:agt_b [requests:write]"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "agent agt_b\n") || strings.Contains(r.stdout, "token person:u-1") || strings.Contains(r.stdout, "chk-") {
		t.Errorf("output shows an unchanged agent or a token:\n%s", r.stdout)
	}
	same := configCall(t, env, "check", writeFile(t, checkRunning))
	if !strings.Contains(same.stdout, "no change") {
		t.Errorf("the running file again: %q", same.stdout)
	}
}

// A file that does not load: exit 1, the error names the line; without a
// token only the validation is printed; a token without admin is refused.
func TestConfigCheckRefusals(t *testing.T) {
	bad := strings.Replace(checkNext, "member: u-2}", "member: u-9}", 1)
	r := configCall(t, nil, "check", writeFile(t, bad))
	if r.code != 1 || !strings.Contains(r.stderr, "line 4") || !strings.Contains(r.stderr, "u-9") {
		t.Fatalf("bad file: exit %d, stderr %q; want 1 naming line 4 and u-9", r.code, r.stderr)
	}
	r = configCall(t, nil, "check", writeFile(t, checkNext))
	if r.code != 0 || !strings.Contains(r.stdout, "not compared") {
		t.Fatalf("no token: exit %d, stdout %q", r.code, r.stdout)
	}
	srv := servertest.Start(t, servertest.WithConfigFile(writeFile(t, checkRunning)))
	r = configCall(t, map[string]string{"COUNTERSIGN_URL": srv.URL, "COUNTERSIGN_TOKEN": "chk-person"}, "check", writeFile(t, checkNext))
	if r.code != 1 || !strings.Contains(r.stderr, "403") && !strings.Contains(strings.ToLower(r.stderr), "forbidden") {
		t.Fatalf("person token: exit %d, stderr %q; want 1 and a refusal", r.code, r.stderr)
	}
	if r := configCall(t, nil, "check"); r.code != 2 {
		t.Fatalf("no file: exit %d, want 2", r.code)
	}
}
