package conformance_test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"

	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/internal/testkit/oidctest"
)

// inboxSurface: the inbox's way in, a browser signed in with the
// provider (a real OpenID provider in process, oidctest), on the HTTP
// API's routes with the session cookie and the CSRF header GET
// /v1/session gives, as the inbox's page sends them. It stands for the
// signed-in person: u-1 with approvals:read and approvals:write, the
// caller of the clickers' tokens.
func inboxSurface(b *http.Client, base string) surface {
	csrf := ""
	return webSurface("inbox", base, b, routes, func(req *http.Request, c call) bool {
		if _, ok := clickers[c.token]; !ok {
			return false
		}
		if csrf == "" {
			csrf = csrfOf(b, base)
		}
		req.Header.Set(httpapi.CSRFHeader, csrf)
		return true
	})
}

// signedIn is a browser (a cookie jar) signed in to base as the
// provider's oidctest.User, whose email is u-1's.
func signedIn(t *testing.T, base string, idp *oidctest.Provider) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &http.Client{Jar: jar}
	resp, err := b.Get(base + "/inbox/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	form := resp.Request.URL
	resp, err = b.PostForm(idp.Issuer+"/login/username", url.Values{"id": {form.Query().Get("authRequestID")},
		"username": {oidctest.User}, "password": {oidctest.Password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != base+"/" {
		t.Fatalf("sign-in ended at %s with %d, want the inbox", resp.Request.URL, resp.StatusCode)
	}
	return b
}

// csrfOf is the session's CSRF token ("" if GET /v1/session fails, which
// the answers then show).
func csrfOf(b *http.Client, base string) string {
	resp, err := b.Get(base + "/v1/session")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var s struct {
		CSRF string `json:"csrf_token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&s)
	return s.CSRF
}
