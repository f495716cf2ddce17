package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/oidctest"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// signInYAML: acme's u-1 is the provider's oidctest.Email; globex's v-1
// is the provider's other user; u-2 has an email the provider never gives.
const signInYAML = `public_url: %s
link_secret_env: SIGNIN_TEST_LINK_SECRET
oidc: {issuer: %s, client_id: %s, client_secret_env: SIGNIN_TEST_OIDC_SECRET}
tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, email: %s, policy: {allow: ["*"]}}
      - {id: u-2, email: nobody@example.com, policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-admin, principal: "service:ops", scopes: [admin]}
  - id: globex
    members:
      - {id: v-1, email: test-user@zitadel.ch, policy: {allow: ["*"]}}
    agents:
      - {id: agt_x, member: v-1}
    tokens:
      - {token: tok-x, principal: "agent:agt_x", scopes: [requests:write, approvals:read, approvals:write]}
`

// signInServer is countersign signed in to by an in-process provider.
type signInServer struct {
	t   *testing.T
	url string
	idp *oidctest.Provider
	srv *servertest.Server
}

func startSignIn(t *testing.T, edits ...func(string) string) *signInServer {
	t.Helper()
	return startSignInWith(t, nil, edits...)
}

// startSignInWith is startSignIn with a servertest option (nil: none).
func startSignInWith(t *testing.T, opt servertest.Option, edits ...func(string) string) *signInServer {
	t.Helper()
	idp := oidctest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	idp.AllowRedirect(base + "/inbox/signin/callback")
	t.Setenv("SIGNIN_TEST_OIDC_SECRET", oidctest.ClientSecret)
	t.Setenv("SIGNIN_TEST_LINK_SECRET", "link-secret-of-the-signin-tests")
	yaml := fmt.Sprintf(signInYAML, base, idp.Issuer, oidctest.ClientID, oidctest.Email)
	for _, e := range edits {
		yaml = e(yaml)
	}
	opts := []servertest.Option{servertest.WithConfig(yaml), servertest.WithListener(ln)}
	if opt != nil {
		opts = append(opts, opt)
	}
	srv := servertest.Start(t, opts...)
	return &signInServer{t: t, url: base, idp: idp, srv: srv}
}

// browser is an HTTP client with a cookie jar.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// startFlow opens /inbox/signin in b and returns the provider's login page
// address (the authorization request is waiting there).
func (s *signInServer) startFlow(b *http.Client) *url.URL {
	s.t.Helper()
	resp, err := b.Get(s.url + "/inbox/signin")
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/login/username" {
		s.t.Fatalf("sign-in start ended at %s with %d, want the provider's login form", resp.Request.URL, resp.StatusCode)
	}
	return resp.Request.URL
}

// login posts the provider's form as user and returns the last answer
// (after every redirect) and its body.
func (s *signInServer) login(b *http.Client, form *url.URL, user string) (*http.Response, string) {
	s.t.Helper()
	resp, err := b.PostForm(s.idp.Issuer+"/login/username", url.Values{"id": {form.Query().Get("authRequestID")},
		"username": {user}, "password": {oidctest.Password}})
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

// signIn signs b in as user and fails unless it ends on the inbox.
func (s *signInServer) signIn(b *http.Client, user string) {
	s.t.Helper()
	resp, body := s.login(b, s.startFlow(b), user)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != s.url+"/" {
		s.t.Fatalf("sign-in ended at %s with %d, want the inbox; body %.300s", resp.Request.URL, resp.StatusCode, body)
	}
}

// call sends one API request with b's cookies plus headers (pairs).
func (s *signInServer) call(b *http.Client, method, path string, body any, headers ...string) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m
}

// cookie is b's session cookie for the server, or nil.
func (s *signInServer) cookie(b *http.Client) *http.Cookie {
	u, _ := url.Parse(s.url)
	for _, c := range b.Jar.Cookies(u) {
		if strings.HasSuffix(c.Name, "countersign_session") {
			return c
		}
	}
	return nil
}
