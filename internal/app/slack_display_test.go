package app_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
)

// slackTexts collects every "text" string of a Slack message.
func slackTexts(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "text" {
				out = append(out, s)
			}
			out = append(out, slackTexts(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, slackTexts(x)...)
		}
	}
	return out
}

// slackBareAmp matches an & that is not one of Slack's three escapes.
var slackBareAmp = regexp.MustCompile(`&(?:[^agl]|a[^m]|am[^p]|amp[^;]|l[^t]|lt[^;]|g[^t]|gt[^;]|$)`)

func checkSlackText(t *testing.T, what string, msg map[string]any) {
	t.Helper()
	all := slackTexts(msg)
	for _, s := range all {
		if strings.ContainsAny(s, "<>\u202e\u200b") || slackBareAmp.MatchString(s) {
			t.Errorf("%s: text field not shown safely: %q", what, s)
		}
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"⚠p\u0430ypal", "⚠раураӏ", `\u202E`, `\u200B`, "&lt;!channel&gt;", "&amp;"} {
		if !strings.Contains(joined, want) {
			t.Errorf("%s: no %q in %q", what, want, joined)
		}
	}
}

// The Slack message of a request whose arguments and reason carry
// mentions, links, bidi and zero-width characters and look-alikes, and
// the message rewritten after a click, show them escaped and marked.
func TestSlackMessageShowsAgentTextSafely(t *testing.T) {
	srv, sink := startSlack(t, true)
	var r record
	req := refund(1)
	req["arguments"] = map[string]any{"file": "invoice\u202efdp.exe", "iban": "GB12\u200b3456", "payee": "p\u0430ypal",
		"site": "раураӏ.com", "note": "<!channel> <https://evil.example|Approve here> & co"}
	req["reason"] = "Pay <!here> at раураӏ.com\u202e & <https://evil.example|here>"
	newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", req, nil, &r)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(sink.all()) == 1 }, "the Slack message")
	msg := sink.all()[0]
	checkSlackText(t, "message", msg)

	responses := newSink(t)
	value := buttons(msg)[0]["value"].(string)
	if code := click(t, srv, slackSecret, time.Now(), "U0001", "countersign_approve", value, responses.srv.URL); code != 200 {
		t.Fatalf("click: %d", code)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(responses.all()) == 1 }, "the rewritten message")
	checkSlackText(t, "rewritten message", responses.all()[0])
}
