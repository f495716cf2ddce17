package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/oidctest"
)

// TestSignInStartTakesOnlySelectAccount: "Use another account" starts the
// flow with prompt=select_account, which reaches the provider's
// authorization request; a start without it asks for no prompt; any other
// prompt or parameter is 400 and starts nothing (no flow cookie).
func TestSignInStartTakesOnlySelectAccount(t *testing.T) {
	s := startSignIn(t)
	b := browser(t)
	b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	start := func(query string) *http.Response {
		t.Helper()
		resp, err := b.Get(s.url + "/inbox/signin" + query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for query, want := range map[string]string{"": "", "?prompt=select_account": "select_account"} {
		resp := start(query)
		to, err := resp.Location()
		if err != nil || resp.StatusCode != http.StatusFound {
			t.Fatalf("start%s: %d, want a redirect to the provider", query, resp.StatusCode)
		}
		q := to.Query()
		if got := q.Get("prompt"); got != want || q.Get("state") == "" || q.Get("code_challenge") == "" {
			t.Errorf("start%s: authorization request %s, want prompt %q with state and PKCE", query, to, want)
		}
	}
	for _, query := range []string{"?prompt=login", "?prompt=none", "?prompt=", "?prompt=select_account&prompt=select_account",
		"?prompt=select_account%20consent", "?redirect=https://evil.example", "?prompt=select_account&x=1"} {
		resp := start(query)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("start%s: %d, want 400", query, resp.StatusCode)
		}
		for _, c := range resp.Cookies() {
			if c.Name == "countersign_signin" && c.MaxAge >= 0 {
				t.Errorf("start%s set the flow cookie %+v: a refused start must begin nothing", query, c)
			}
		}
	}
}

// TestSignInRefusalPageOffersAnotherAccount: a person the provider signs
// in but no member matches reads why, with "Use another account" (the
// flow again with prompt=select_account) and a way back to the inbox; a
// failed flow's page has both too.
func TestSignInRefusalPageOffersAnotherAccount(t *testing.T) {
	s := startSignIn(t, func(y string) string {
		return strings.Replace(y, "email: "+oidctest.Email, "email: someone-else@example.com", 1)
	})
	b := browser(t)
	resp, body := s.login(b, s.startFlow(b), oidctest.User)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "You signed in with the provider as "+oidctest.Email) {
		t.Fatalf("no-member sign-in: %d %.400s, want 403 naming the account", resp.StatusCode, body)
	}
	checkWaysBack(t, resp, body)
	if s.cookie(b) != nil {
		t.Error("a refused sign-in left a session cookie")
	}

	resp, err := browser(t).Get(s.url + "/inbox/signin/callback?state=forged&code=x")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "No session was made") {
		t.Fatalf("forged callback: %d %.300s", resp.StatusCode, raw)
	}
	checkWaysBack(t, resp, string(raw))
}

func checkWaysBack(t *testing.T, resp *http.Response, body string) {
	t.Helper()
	for _, want := range []string{`<a class="primary" id="another" href="/inbox/signin?prompt=select_account">Use another account</a>`,
		`<a id="back" href="/">Back to the inbox</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("refusal page lacks %s:\n%s", want, body)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("refusal page CSP %q", csp)
	}
}
