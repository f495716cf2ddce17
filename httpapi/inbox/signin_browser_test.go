package inbox_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/oidctest"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

const signInYAML = `public_url: %s
link_secret_env: INBOX_SIGNIN_LINK_SECRET
oidc: {issuer: %s, client_id: %s, client_secret_env: INBOX_SIGNIN_OIDC_SECRET}
tenants:
  - id: acme
    members:
      - {id: u-1, email: %s, policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
`

// TestSignInInBrowser: a person signs in through the provider in
// Chromium, sees their inbox with no token in the page's reach (the
// session cookie is HttpOnly), answers (with the CSRF token the page
// reads), and signs out, which ends the session on the server.
func TestSignInInBrowser(t *testing.T) {
	b := openBrowser(t)
	idp := oidctest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	idp.AllowRedirect(base + "/inbox/signin/callback")
	t.Setenv("INBOX_SIGNIN_OIDC_SECRET", oidctest.ClientSecret)
	t.Setenv("INBOX_SIGNIN_LINK_SECRET", "link-secret-of-the-browser-test")
	srv := servertest.Start(t, servertest.WithListener(ln),
		servertest.WithConfig(fmt.Sprintf(signInYAML, base, idp.Issuer, oidctest.ClientID, oidctest.Email)))
	api := srv.API(t)

	b.do(chromedp.Navigate(base + "/"))
	host := strings.TrimPrefix(idp.Issuer, "http://")
	b.wait("the provider's button", fmt.Sprintf(`!document.getElementById('signin-oidc').hidden && document.getElementById('signin-oidc').textContent === %q`, "Sign in with "+host))
	// The provider's button comes first; the token box waits behind "Use a token".
	if got := eval[string](b, `[document.getElementById('token-box').open, document.getElementById('signin-oidc').compareDocumentPosition(document.getElementById('token-box')) & Node.DOCUMENT_POSITION_FOLLOWING, document.getElementById('token').checkVisibility()].join(' ')`); got != "false 4 false" {
		t.Errorf("sign-in page: token box open, after the button, token field shown = %q, want the button first and the token box closed", got)
	}
	b.screen("signin")
	b.do(chromedp.EmulateViewport(390, 844))
	b.screen("signin-phone")
	b.do(chromedp.EmulateViewport(1100, 760))
	b.do(chromedp.Click(chromedp.ID("signin-oidc")))
	b.do(chromedp.WaitVisible(chromedp.ID("username")))
	b.do(chromedp.SendKeys(chromedp.ID("username"), oidctest.User), chromedp.SendKeys(chromedp.ID("password"), oidctest.Password),
		chromedp.Click(chromedp.ID("submit")))
	b.do(chromedp.WaitVisible(chromedp.ID("live")))
	b.wait("the live inbox", `document.getElementById('live')?.classList.contains('on') && document.getElementById('count').textContent === '0'`)
	if got := eval[string](b, `document.cookie + '|' + sessionStorage.length`); got != "|0" {
		t.Errorf("cookie and storage the page can read = %q, want none (the session cookie is HttpOnly)", got)
	}
	code, data := api.Do(http.MethodPost, "/v1/requests", "tok-main", map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}})
	var req domain.Request
	if err := json.Unmarshal(data, &req); err != nil || code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, data)
	}
	id := string(req.ID)
	b.wait("the request in the list", has(id))
	b.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#list li[data-id=%q]`, id))))
	b.wait("the request's page", shown(id))
	b.do(chromedp.KeyEvent("a"))
	b.wait("the allow form", `document.getElementById('decision-allow')?.checked === true`)
	b.do(chromedp.Click(chromedp.ID("answer-submit")))
	b.wait("the answer's outcome", `document.querySelector('#answer-result.done')?.textContent.includes('approved')`)
	b.shot("signed-in-approved")
	r := api.Get("tok-person", domain.RequestID(id))
	if r.Status != domain.StatusApproved || r.Decision == nil || r.Decision.By != (domain.Ref{Kind: domain.KindPerson, ID: "u-1"}) {
		t.Fatalf("after approving: %s %+v, want approved by person:u-1", r.Status, r.Decision)
	}
	b.do(chromedp.Click(chromedp.ID("signout")))
	b.wait("the sign-in page", `!document.getElementById('signin').hidden`)
	b.wait("the session ended on the server", `(window.__ended = window.__ended || fetch('/v1/session').then(r => r.status)) && window.__ended.then(s => window.__status = s) && window.__status === 401`)
	code, _ = api.Do(http.MethodGet, "/v1/requests?status=pending", "tok-person", nil)
	if code != http.StatusOK {
		t.Errorf("token sign-in still works beside OIDC: %d", code)
	}
	b.checkConsole()
}

// TestSignInRefusedInBrowser: signed in at the provider as an account no
// member has, the person reads why, with "Use another account" first
// and a way back; that button asks the provider to pick an account
// (prompt=select_account) and, signed in as Grace, the inbox names her.
func TestSignInRefusedInBrowser(t *testing.T) {
	b := openBrowser(t)
	idp := oidctest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	idp.AllowRedirect(base + "/inbox/signin/callback")
	t.Setenv("INBOX_SIGNIN_OIDC_SECRET", oidctest.ClientSecret)
	t.Setenv("INBOX_SIGNIN_LINK_SECRET", "link-secret-of-the-browser-test")
	yaml := strings.Replace(fmt.Sprintf(signInYAML, base, idp.Issuer, oidctest.ClientID, "someone-else@example.com"),
		"      - {id: u-1,", "      - {id: u-2, name: Grace Hopper, email: test-user@zitadel.ch, policy: {allow: [\"*\"]}}\n      - {id: u-1,", 1)
	servertest.Start(t, servertest.WithListener(ln), servertest.WithConfig(yaml))

	b.do(chromedp.Navigate(base + "/"))
	b.wait("the provider's button", `!document.getElementById('signin-oidc').hidden`)
	b.do(chromedp.Click(chromedp.ID("signin-oidc")))
	b.do(chromedp.WaitVisible(chromedp.ID("username")))
	b.do(chromedp.SendKeys(chromedp.ID("username"), oidctest.User), chromedp.SendKeys(chromedp.ID("password"), oidctest.Password),
		chromedp.Click(chromedp.ID("submit")))
	b.do(chromedp.WaitVisible(chromedp.ID("another")))
	if got := eval[string](b, `document.getElementById('why').textContent`); !strings.Contains(got, "as "+oidctest.Email) || !strings.Contains(got, "no session was made") {
		t.Errorf("the refusal reads %q", got)
	}
	if got := eval[string](b, `document.getElementById('back').getAttribute('href') + ' ' + document.getElementById('another').getAttribute('href')`); got != "/ /inbox/signin?prompt=select_account" {
		t.Errorf("the ways out are %q", got)
	}
	b.screen("signin-refused")
	// (TestSignInStartTakesOnlySelectAccount in httpapi reads the
	// authorization request the button makes.)
	b.do(chromedp.Click(chromedp.ID("another")))
	b.do(chromedp.WaitVisible(chromedp.ID("username")))
	b.do(chromedp.SendKeys(chromedp.ID("username"), "test-user@127.0.0.1"), chromedp.SendKeys(chromedp.ID("password"), oidctest.Password),
		chromedp.Click(chromedp.ID("submit")))
	b.do(chromedp.WaitVisible(chromedp.ID("whoami")))
	b.wait("the inbox, signed in as Grace", `document.getElementById('whoami')?.textContent === 'Signed in as Grace Hopper (u-2)'`)
	b.checkConsole()
}
