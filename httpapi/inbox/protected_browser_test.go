package inbox_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// An allow of a protected write while no client watches its session is
// refused, and the page says why (not "the request changed"); nothing
// changes.
func TestInboxProtectedWriteUnwatchedInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t)
	api := srv.API(t)
	b.do(chromedp.Navigate(srv.URL + "/"))
	b.wait("the sign-in form", `!document.getElementById('signin').hidden`)
	b.do(chromedp.SendKeys(chromedp.ID("token"), servertest.TokenPerson), chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("the live inbox", `document.getElementById('live').classList.contains('on')`)
	id := submit(t, api, map[string]any{"tool": "Write", "session": "ses-pw", "arguments": map[string]any{"file_path": ".git/config"},
		"subject": map[string]any{"kind": "tool", "protected_write": true}})
	b.wait("the request in the list", has(id))
	b.do(chromedp.KeyEvent("j"))
	b.wait("the request", shown(id))
	b.do(chromedp.KeyEvent("a"))
	b.wait("the allow form", `document.getElementById('answer') !== null`)
	b.do(chromedp.Click(chromedp.ID("answer-submit")))
	b.wait("the refusal", `document.querySelector('#answer-result.conflict') !== null`)
	if msg := eval[string](b, `document.getElementById('answer-result').textContent`); !strings.Contains(msg, "protected write") ||
		strings.Contains(msg, "changed since") {
		t.Errorf("the page says %q, want why: a protected write nobody watches", msg)
	}
	if r := api.Get(servertest.TokenPerson, domain.RequestID(id)); r.Status != domain.StatusPending || r.Revision != 0 {
		t.Fatalf("the refused answer changed the request: %s at %d", r.Status, r.Revision)
	}
	b.checkConsole()
}
