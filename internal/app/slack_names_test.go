package app_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// Slack names people by name, the id beside it (SPEC §10): the message
// posted by the notify worker says whom the request waits on, and after
// a click the rewritten message says who answered and who decided. A
// name is agent-proof text like any other: Slack's & < > escaped.
func TestSlackNamesPeople(t *testing.T) {
	sink := newSink(t)
	t.Setenv("CS_TEST_SLACK_SECRET", slackSecret)
	yaml := hookTenant("", "    slack_signing_secret_env: CS_TEST_SLACK_SECRET\n",
		"      - {url: \""+sink.srv.URL+"\", format: slack, events: [request.created]}\n")
	yaml = strings.Replace(yaml, "{id: u-1, policy:", `{id: u-1, name: "Ada <!here> Lovelace", policy:`, 1)
	srv := servertest.Start(t, servertest.WithConfig(yaml))
	var r record
	newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", refund(1), nil, &r)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(sink.all()) == 1 }, "the Slack message")
	raw, _ := json.Marshal(sink.all()[0])
	if want := "waiting on person Ada \\u0026lt;!here\\u0026gt; Lovelace (u-1)"; !strings.Contains(string(raw), want) {
		t.Fatalf("the message does not say %s: %s", want, raw)
	}
	if strings.Contains(string(raw), "<!here>") {
		t.Fatalf("a name became a mention: %s", raw)
	}
	responses := newSink(t)
	value := buttons(sink.all()[0])[0]["value"].(string)
	if code := click(t, srv, slackSecret, time.Now(), "U0001", "countersign_approve", value, responses.srv.URL); code != 200 {
		t.Fatalf("click: %d", code)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(responses.all()) == 1 }, "the rewritten message")
	raw, _ = json.Marshal(responses.all()[0])
	for _, want := range []string{"Answered from Slack by Ada \\u0026lt;!here\\u0026gt; Lovelace (u-1)",
		"approved by person Ada \\u0026lt;!here\\u0026gt; Lovelace (u-1)"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the rewritten message does not say %s: %s", want, raw)
		}
	}
}

// A click on a message whose revision the request moved on from (the
// first stage of a shell call was allowed from the same message) is
// refused in the HTTP API's words for an answer at that revision (SPEC
// §12: every surface says so in the same words), and answers nothing.
func TestSlackStaleClickInTheHTTPAPIsWords(t *testing.T) {
	srv, sink := startSlack(t, true)
	var r record
	cmd := "ls -la && rm -rf /tmp/x"
	newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", map[string]any{"tool": "Bash", "arguments": map[string]any{"command": cmd},
		"subject": map[string]any{"kind": "shell", "command": cmd}}, nil, &r)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(sink.all()) == 1 }, "the Slack message")
	value := buttons(sink.all()[0])[0]["value"].(string)
	responses := newSink(t)
	for i := 0; i < 2; i++ {
		if code := click(t, srv, slackSecret, time.Now(), "U0001", "countersign_approve", value, responses.srv.URL); code != 200 {
			t.Fatalf("click %d: %d", i, code)
		}
		testutil.Eventually(t, 10*time.Second, func() bool { return len(responses.all()) == i+1 }, "the click's response")
	}
	if got := getRecord(t, srv, r.ID); got.Status != "pending" || got.Revision != 1 {
		t.Fatalf("after the stale click: %+v", got)
	}
	var p struct{ Detail string }
	code := newClient(srv.URL, "hook-person").do(t, "POST", "/v1/requests/"+r.ID, map[string]any{"expected": 0, "decision": "allow"}, nil, &p)
	note, _ := responses.all()[1]["text"].(string)
	if code != 409 || p.Detail == "" || !strings.Contains(note, "("+p.Detail+";") {
		t.Fatalf("the stale click says %q; the HTTP API says %d %q", note, code, p.Detail)
	}
}
