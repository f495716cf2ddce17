package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

func suggestRun(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
		return map[string]string{"COUNTERSIGN_URL": url, "COUNTERSIGN_TOKEN": "dev-admin"}[k]
	}}
	return policySuggest(context.Background(), args, env), out.String(), errb.String()
}

// Refunds u-1 allowed three times are suggested; a tool allowed twice and
// denied once is not, nor one allowed once; a shell prefix allowed
// twice is, by its words; the state is left as it was.
func TestPolicySuggest(t *testing.T) {
	yaml := config.DemoYAML + "      - {token: dev-admin, principal: \"service:ops\", scopes: [admin]}\n"
	srv := servertest.Start(t, servertest.WithConfig(yaml))
	answer := func(body, decision string) {
		var rec domain.Request
		cliHTTP(t, srv, http.MethodPost, "/v1/requests", servertest.TokenMain, body, &rec)
		cliHTTP(t, srv, http.MethodPost, "/v1/requests/"+string(rec.ID), servertest.TokenPerson,
			fmt.Sprintf(`{"expected":%d,"decision":%q}`, rec.Revision, decision), &rec)
	}
	call := func(tool string, n int) string {
		return fmt.Sprintf(`{"tool":%q,"arguments":{"n":%d}}`, tool, n)
	}
	for i := range 3 {
		answer(call("issue_refund", i), "allow")
	}
	answer(call("close_ticket", 1), "allow")
	answer(call("close_ticket", 2), "allow")
	answer(call("close_ticket", 3), "deny")
	answer(call("lookup_order", 1), "allow")
	for _, cmd := range []string{"git status", "git status --short"} {
		answer(fmt.Sprintf(`{"tool":"Bash","arguments":{"command":%q},"subject":{"kind":"shell"}}`, cmd), "allow")
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		_, out := auditRun(t, srv.URL, "export")
		return strings.Count(out, `"type":"dev.countersign.request.decided"`) == 9
	}, "the nine decisions in the log")
	_, before := auditRun(t, srv.URL, "export")
	code, out, errs := suggestRun(t, srv.URL, "--min", "2")
	want := `suggestions:
  "agt_main":
    - {capability: "tools.call:Bash", shell_prefix: ["git", "status"], allowed: 2}
    - {capability: "tools.call:issue_refund", allowed: 3}
`
	if code != 0 || !strings.HasSuffix(out, want) {
		t.Fatalf("suggest --min 2: exit %d\n%s%s\nwant it to end\n%s", code, out, errs, want)
	}
	if _, out, _ := suggestRun(t, srv.URL, "--min", "4"); !strings.Contains(out, "suggestions: {}") {
		t.Errorf("suggest --min 4: %s; want none", out)
	}
	if _, after := auditRun(t, srv.URL, "export"); after != before {
		t.Errorf("suggest changed the log")
	}
	if code, _, _ := suggestRun(t, srv.URL, "--min", "0"); code != cliExitUsage {
		t.Errorf("--min 0: exit %d; want usage", code)
	}
}
