package inbox_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// "Edit and allow" (SPEC §5, approve with edits): the stored arguments in
// a JSON editor, checked in the page before anything is sent; the edit is
// sent as typed and binds the call it describes.
func TestInboxEditAndAllowInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t)
	api := srv.API(t)
	b.do(chromedp.Navigate(srv.URL + "/"))
	b.wait("the sign-in form", `!document.getElementById('signin').hidden`)
	b.do(chromedp.SendKeys(chromedp.ID("token"), servertest.TokenPerson), chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("the live inbox", `document.getElementById('live').classList.contains('on')`)
	id := submit(t, api, map[string]any{"tool": "issue_refund", "arguments": json.RawMessage(`{"payment_id": "payment_123", "10": 1, "amount": 49.50}`)})
	b.wait("the request in the list", has(id))
	b.do(chromedp.KeyEvent("j"))
	b.wait("the request", shown(id))
	recordPosts(b)
	b.do(chromedp.Click(chromedp.ID("open-edit")))
	b.wait("the edit form", `document.getElementById('edit-arguments') !== null`)
	if got := eval[string](b, `document.getElementById('edit-arguments').value`); got != "{\n  \"payment_id\": \"payment_123\",\n  \"10\": 1,\n  \"amount\": 49.50\n}" {
		t.Errorf("the editor holds %q, want the stored arguments with their key order and numbers as written", got)
	}

	for _, bad := range []struct{ text, want string }{
		{`{"amount": 10`, "not JSON"},
		{`[1]`, "must be a JSON object"},
		{`{"amount": 10, "amount": 20}`, `"amount" appears twice`},
		{`{"note": "\ud800"}`, "lone surrogate"},
		{`{"amount": 1e999}`, "too large"},
	} {
		eval[chromedp.Void](b, fmt.Sprintf(`document.getElementById('edit-arguments').value = %q`, bad.text))
		b.do(chromedp.Click(chromedp.ID("edit-submit")))
		if msg := eval[string](b, `document.getElementById('edit-error').textContent`); !strings.Contains(msg, bad.want) {
			t.Errorf("%s: the page says %q, want %q", bad.text, msg, bad.want)
		}
		if n := eval[int](b, `window.__posts.length`); n != 0 {
			t.Fatalf("%s: the page sent %d answer(s); arguments that fail the check must not be sent", bad.text, n)
		}
	}
	if r := api.Get(servertest.TokenPerson, domain.RequestID(id)); r.Status != domain.StatusPending || r.Revision != 0 {
		t.Fatalf("refused edits changed the request: %s at %d", r.Status, r.Revision)
	}

	edited := `{"payment_id": "payment_123", "amount": 10.50}`
	eval[chromedp.Void](b, fmt.Sprintf(`document.getElementById('edit-arguments').value = %q`, edited))
	b.do(chromedp.Click(chromedp.ID("edit-submit")))
	b.wait("the answer", `document.querySelector('#answer-result.done') !== null && document.getElementById('edited') !== null`)
	r := api.Get(servertest.TokenPerson, domain.RequestID(id))
	if r.Status != domain.StatusApproved || string(r.Arguments) != `{"payment_id":"payment_123","amount":10.50}` || r.Edited == nil || r.Decision.Scope != domain.ScopeOnce {
		t.Errorf("after Edit and allow: %s arguments %s edited %+v; want approved once with the arguments as typed (the number as written)", r.Status, r.Arguments, r.Edited)
	}
	if got := eval[string](b, `document.getElementById('args').textContent`); !strings.Contains(got, "10.50") {
		t.Errorf("the page shows the arguments %q, want the edited ones", got)
	}
	b.shot("edit-and-allow")
	b.checkConsole()
}
