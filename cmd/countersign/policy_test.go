package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals/replay"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

func policyRun(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
		return map[string]string{"COUNTERSIGN_URL": url, "COUNTERSIGN_TOKEN": "dev-admin"}[k]
	}}
	return policyReplay(context.Background(), args, env), out.String(), errb.String()
}

// The refunds of the demo tenant, replayed with refunds read at once: the
// CLI prints the change as a table and as JSON, from the server and from
// an exported log alike; a bad file is refused.
func TestPolicyReplayCLI(t *testing.T) {
	yaml := config.DemoYAML + "      - {token: dev-admin, principal: \"service:ops\", scopes: [admin]}\n"
	srv := servertest.Start(t, servertest.WithConfig(yaml))
	cliSubmit(t, srv, servertest.TokenMain, "")
	var log string
	testutil.Eventually(t, 20*time.Second, func() bool {
		code, out := auditRun(t, srv.URL, "export")
		log = out
		return code == 0 && strings.Contains(out, `"revision":0,`)
	}, "the refund's creation in the log")
	candidate := auditFile(t, "candidate.yaml", []byte(strings.Replace(yaml, `read_rules: ["tools.call:read_*"]`, `read_rules: ["tools.call:read_*", "tools.call:issue_refund"]`, 1)))
	code, out, errs := policyRun(t, srv.URL, "--config", candidate, "--since", "1h")
	if code != 0 || !strings.Contains(out, "1 would change") || !strings.Contains(out, `read rule "tools.call:issue_refund"`) {
		t.Fatalf("table: exit %d, %s%s", code, out, errs)
	}
	exported := auditFile(t, "audit.jsonl", []byte(log))
	for _, args := range [][]string{{"--json"}, {"--json", "--log", exported}} {
		code, out, errs = policyRun(t, srv.URL, append([]string{"--config", candidate}, args...)...)
		var rep replay.Report
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Changes) != 1 || rep.Changes[0].New.By != replay.ByRead {
			t.Errorf("%v: exit %d, %s%s", args, code, out, errs)
		}
	}
	bad := auditFile(t, "bad.yaml", []byte("tenants: [\n"))
	if code, _, errs := policyRun(t, srv.URL, "--config", bad); code != cliExitRefused || !strings.Contains(errs, "config") {
		t.Errorf("bad YAML: exit %d, %s", code, errs)
	}
	if code, _, _ := policyRun(t, srv.URL); code != cliExitUsage {
		t.Errorf("no --config: exit %d; want usage", code)
	}
}
