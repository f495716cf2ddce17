package inbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// submit sends a request as agt_main (its decider is person u-1) and
// returns its id.
func submit(t *testing.T, api servertest.API, body map[string]any) string {
	t.Helper()
	code, data := api.Do(http.MethodPost, "/v1/requests", servertest.TokenMain, body)
	var r domain.Request
	if err := json.Unmarshal(data, &r); err != nil || code != http.StatusCreated || r.Status != domain.StatusPending {
		t.Fatalf("submit: %d %s", code, data)
	}
	return string(r.ID)
}

// hostile carries HTML in its arguments and reason, bidi and zero-width
// characters (one raw, one as a JSON escape), a Cyrillic look-alike, an
// integer-like key after a word key and a number with a trailing zero
// (JSON.parse would reorder and round them); any HTML of it that ran
// would set window.__pwned.
const hostileArgs = `{"zeta": 1, "10": 2, "amount": 49.50,
 "html": "<img src=x onerror=\"window.__pwned='args-img'\">",
 "script": "<script>window.__pwned='args-script'</script>",
 "file": "invoice` + "\u202E" + `fdp.exe", "iban": "GB12\u200b3456", "payee": "p\u0430ypal"}`

func hostile(session string) map[string]any {
	return map[string]any{
		"tool":      "issue_refund",
		"session":   session,
		"reason":    `Duplicate charge <img src=x onerror="window.__pwned='reason-img'"> <script>window.__pwned='reason-script'</script>`,
		"arguments": json.RawMessage(hostileArgs),
	}
}

func has(id string) string {
	return fmt.Sprintf(`document.querySelector('#list li[data-id=%q]') !== null`, id)
}
func shown(id string) string {
	return fmt.Sprintf(`document.getElementById('detail').dataset.id === %q && document.querySelector('#list li[aria-selected="true"]')?.dataset.id === %q`, id, id)
}

// TestInboxInBrowser signs in, sees requests arrive live, reads one
// hostile request as text with its invisible characters escaped, approves
// it with scope session, meets a conflict, reads the history, and does
// the same on a phone-sized screen.
func TestInboxInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t)
	api := srv.API(t)

	b.do(chromedp.Navigate(srv.URL + "/"))
	b.wait("the sign-in form", `!document.getElementById('signin').hidden`)
	b.do(chromedp.SendKeys(chromedp.ID("token"), "not-a-token"), chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("the refusal", `document.getElementById('signin-error').textContent.includes('not accepted') && sessionStorage.length === 0`)
	b.do(chromedp.SendKeys(chromedp.ID("token"), servertest.TokenPerson), chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("the live empty inbox", `document.getElementById('live').classList.contains('on') && document.getElementById('count').textContent === '0'`)
	eval[chromedp.Void](b, `window.__sameLoad = true`)
	recordPosts(b)
	if got := eval[string](b, `sessionStorage.getItem('countersign.token') + ' ' + localStorage.length + ' ' + document.cookie`); got != servertest.TokenPerson+" 0 " {
		t.Errorf("token storage = %q, want the person's token in session storage only", got)
	}

	first := submit(t, api, hostile("ses-1"))
	b.wait("the first request in the list", has(first))
	second := submit(t, api, map[string]any{"tool": "send_email", "arguments": map[string]any{"to": "a@example.com"}})
	b.wait("the second request in the list", has(second))
	if !eval[bool](b, `window.__sameLoad === true`) {
		t.Fatal("the page was reloaded; requests must arrive live")
	}

	keys(b, first, second)
	readHostile(t, b)
	approveWithSession(t, b, api, first)
	conflict(t, b, api, second)
	history(t, b, first, second)
	phone(t, b, api)
	b.checkConsole()
}

// recordPosts keeps the body of each POST the page sends in
// window.__posts (the test wraps fetch from the DevTools side).
func recordPosts(b *browser) {
	eval[chromedp.Void](b, `window.__posts = []; { const f = window.fetch; window.fetch = (u, init) => {
		if (init && init.method === 'POST') window.__posts.push(init.body); return f(u, init); }; }`)
}

// lastPost returns the body of the last POST the page sent.
func lastPost(t *testing.T, b *browser) map[string]any {
	t.Helper()
	var body map[string]any
	raw := eval[string](b, `window.__posts.at(-1) ?? ''`)
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		t.Fatalf("last POST of the page: %q: %v", raw, err)
	}
	return body
}

// keys: j and k move the selection.
func keys(b *browser, first, second string) {
	b.do(chromedp.KeyEvent("j"))
	b.wait("j selects the first", shown(first))
	b.do(chromedp.KeyEvent("j"))
	b.wait("j selects the second", shown(second))
	b.do(chromedp.KeyEvent("k"))
	b.wait("k selects the first again", shown(first))
}

func readHostile(t *testing.T, b *browser) {
	args := eval[string](b, `document.getElementById('args').textContent`)
	for _, want := range []string{`\u202E`, `\u200B`, `"invoice\u202Efdp.exe"`, `<script>window.__pwned='args-script'</script>`,
		`<img src=x onerror=\"window.__pwned='args-img'\">`, "{\n  \"zeta\": 1,\n  \"10\": 2,\n  \"amount\": 49.50,"} {
		if !strings.Contains(args, want) {
			t.Errorf("arguments shown as %q, want them to contain %q", args, want)
		}
	}
	if strings.ContainsAny(args, "\u202e\u200b") {
		t.Errorf("arguments render U+202E or U+200B instead of escaping them: %q", args)
	}
	if got := eval[string](b, `[...document.querySelectorAll('#args mark.lookalike')].map(e => e.textContent).join('')`); got != "\u0430" {
		t.Errorf("look-alike letters flagged in the arguments: %q, want the Cyrillic а of pаypal", got)
	}
	if notice := eval[string](b, `document.querySelector('.notices')?.textContent ?? ''`); !strings.Contains(notice, "RIGHT-TO-LEFT OVERRIDE") || !strings.Contains(notice, "U+0430") {
		t.Errorf("notices = %q, want the override and the look-alike named", notice)
	}
	reason := eval[string](b, `document.getElementById('reason').textContent`)
	if !strings.Contains(reason, `<img src=x onerror="window.__pwned='reason-img'">`) || !strings.Contains(reason, `<script>window.__pwned='reason-script'</script>`) {
		t.Errorf("reason shown as %q, want the agent's words as text", reason)
	}
	if n := eval[int](b, `document.querySelectorAll('main img, main script').length`); n != 0 {
		t.Errorf("%d img or script elements in the page: data was parsed as markup", n)
	}
	if got := eval[string](b, `String(window.__pwned)`); got != "undefined" {
		t.Errorf("window.__pwned = %s: a payload ran", got)
	}
	eval[chromedp.Void](b, `document.getElementById('fields').scrollIntoView({block: 'center'})`)
	b.shot("request")
	left := eval[string](b, `document.querySelector('#detail .countdown').textContent`)
	b.wait("the deadline counting down", fmt.Sprintf(`document.querySelector('#detail .countdown').textContent !== %q`, left))
}

func approveWithSession(t *testing.T, b *browser, api servertest.API, id string) {
	b.do(chromedp.KeyEvent("a"))
	b.wait("the allow form", `document.getElementById('decision-allow')?.checked === true`)
	b.do(chromedp.Click(chromedp.ID("scope-session")), chromedp.SendKeys(chromedp.ID("answer-reason"), "Checked with the customer."),
		chromedp.Click(chromedp.ID("answer-submit")))
	b.wait("the answer's outcome", `document.querySelector('#answer-result.done')?.textContent.includes('approved')`)
	b.shot("approved")
	want := map[string]any{"expected": 0.0, "decision": "allow", "scope": "session", "reason": "Checked with the customer."}
	if got := lastPost(t, b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the page sent %v, want %v", got, want)
	}
	r := api.Get(servertest.TokenPerson, domain.RequestID(id))
	if r.Status != domain.StatusApproved || r.Decision == nil || r.Decision.Scope != "session" || r.Decision.By.Kind != "person" ||
		r.Decision.Note != "Checked with the customer." {
		t.Fatalf("after approving in the browser: %s %+v, want approved with scope session by the person, with the reason typed", r.Status, r.Decision)
	}
	code, data := api.Do(http.MethodGet, "/v1/grants", servertest.TokenPerson, nil)
	var page struct{ Items []domain.Grant }
	_ = json.Unmarshal(data, &page)
	for _, g := range page.Items {
		if string(g.RequestID) == id && g.Scope == "session" && g.Session == "ses-1" && g.Effect == "allow" {
			return
		}
	}
	t.Errorf("no session grant from %s: %d %s", id, code, data)
}

// conflict: the request is denied over HTTP while the form is open; the
// answer sent with the shown revision is refused, the page says what
// changed and shows the current version.
func conflict(t *testing.T, b *browser, api servertest.API, id string) {
	b.do(chromedp.KeyEvent("j"))
	b.wait("the second request", shown(id))
	b.do(chromedp.KeyEvent("a"))
	b.wait("the allow form", `document.getElementById('answer') !== null`)
	api.Answer(servertest.TokenPerson, domain.RequestID(id), "deny", "Not this one.")
	b.wait("the live note that it changed", `document.getElementById('changed')?.hidden === false`)
	b.do(chromedp.Click(chromedp.ID("answer-submit")))
	b.wait("the conflict", `document.querySelector('#answer-result.conflict') !== null`)
	msg := eval[string](b, `document.getElementById('answer-result').textContent`)
	for _, want := range []string{"denied by person u-1", "Revision 0 → 1", "Not this one.", "Nothing was changed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("conflict message %q, want it to say %q", msg, want)
		}
	}
	// The page shows the current version at once: no live buttons of the
	// refused revision stay on it.
	if got := eval[string](b, `document.getElementById('detail').dataset.revision + ' ' + document.querySelectorAll('#open-allow, #open-deny, #answer').length + ' ' + (document.querySelector('#detail .decision')?.textContent ?? '')`); !strings.HasPrefix(got, "1 0 ") || !strings.Contains(got, "denied") {
		t.Errorf("after the conflict the page shows %q, want revision 1, no answer buttons or form, its decision denied", got)
	}
	b.shot("conflict")
	if got := lastPost(t, b); got["expected"] != 0.0 || got["decision"] != "allow" {
		t.Errorf("the page sent %v, want the revision it showed (0) as expected", got)
	}
	if r := api.Get(servertest.TokenPerson, domain.RequestID(id)); r.Status != domain.StatusDenied || r.Revision != 1 {
		t.Errorf("after the refused answer: %s revision %d, want denied at revision 1", r.Status, r.Revision)
	}
}

func history(t *testing.T, b *browser, first, second string) {
	b.do(chromedp.KeyEvent("h"))
	b.wait("the history", `document.getElementById('list').dataset.view === 'history'`)
	b.wait("both decided requests", has(first)+" && "+has(second))
	for id, want := range map[string][]string{first: {"approved", "by person u-1", "scope session"}, second: {"denied", "by person u-1"}} {
		row := eval[string](b, fmt.Sprintf(`document.querySelector('#list li[data-id=%q]').textContent`, id))
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("history row %q, want %q", row, w)
			}
		}
	}
	b.do(chromedp.KeyEvent("j"))
	b.wait("a decided request's page", `document.querySelector('#detail .decision') !== null`)
	if txt := eval[string](b, `document.getElementById('detail').textContent`); strings.Contains(txt, "null") || strings.Contains(txt, "undefined") {
		t.Errorf("a decided request's page shows null or undefined: %q", txt)
	}
	b.shot("history")
}

// phone: the same on a 390×844 screen, with no sideways scrolling.
func phone(t *testing.T, b *browser, api servertest.API) {
	b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateTouch, chromedp.EmulateMobile), chromedp.KeyEvent("i"))
	id := submit(t, api, hostile("ses-2")) // ses-1 holds a grant now
	b.wait("the request on the phone", has(id))
	b.do(chromedp.KeyEvent("j"))
	b.wait("its page", shown(id))
	b.do(chromedp.KeyEvent("d"))
	b.wait("the deny form", `document.getElementById('decision-deny')?.checked === true`)
	if w := eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		t.Errorf("the page is %dpx wider than a phone's screen", w)
	}
	if !eval[bool](b, `document.getElementById('detail').getBoundingClientRect().top >= document.querySelector('.listpane').getBoundingClientRect().bottom - 1`) {
		t.Error("on a phone the request's page is not below the list: the layout did not stack")
	}
	b.shot("phone")
}
