package httpapi_test

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// A person signs in through the provider (code + PKCE + nonce), reads and
// answers their inbox with the cookie and its CSRF token, and signs out:
// the session ends on the server, not only in the browser.
func TestSignInCodeFlow(t *testing.T) {
	s := startSignIn(t)
	b := browser(t)
	var set *http.Cookie
	b.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		for _, c := range req.Response.Cookies() {
			if c.Name == "countersign_session" {
				set = c
			}
		}
		return nil
	}
	s.signIn(b, "test-user2")
	if set == nil || !set.HttpOnly || set.SameSite != http.SameSiteStrictMode || set.Path != "/" || set.Domain != "" ||
		set.MaxAge <= 0 || set.MaxAge > 8*3600 {
		t.Fatalf("session cookie %+v, want HttpOnly, SameSite=Strict, host-only at /, at most 8h", set)
	}
	code, me := s.call(b, "GET", "/v1/session", nil)
	if code != http.StatusOK || me["tenant"] != "acme" || me["member"] != "u-1" || me["csrf_token"] == "" {
		t.Fatalf("GET /v1/session = %d %v, want acme u-1 with a csrf token", code, me)
	}
	agent := newClient(t, s.url, "tok-main")
	rec := agent.pending()
	if code, list := s.call(b, "GET", "/v1/requests?status=pending", nil); code != http.StatusOK || len(objects(list["items"])) != 1 {
		t.Fatalf("inbox with the cookie = %d %v, want the one pending request", code, list)
	}
	answer := map[string]any{"expected": num(rec["revision"]), "decision": "allow"}
	if code, p := s.call(b, "POST", "/v1/requests/"+str(rec["id"]), answer); code != http.StatusForbidden || p["reason"] != "csrf" {
		t.Fatalf("answer without the CSRF header = %d %v, want 403 reason csrf", code, p)
	}
	if code, p := s.call(b, "POST", "/v1/requests/"+str(rec["id"]), answer, "X-CSRF-Token", "forged"); code != http.StatusForbidden {
		t.Fatalf("answer with a wrong CSRF token = %d %v, want 403", code, p)
	}
	if got := str(agent.get(str(rec["id"]))["status"]); got != "pending" {
		t.Fatalf("after refused answers the request is %s, want pending", got)
	}
	code, done := s.call(b, "POST", "/v1/requests/"+str(rec["id"]), answer, "X-CSRF-Token", str(me["csrf_token"]))
	if code != http.StatusOK || str(done["status"]) != "approved" {
		t.Fatalf("answer with the CSRF token = %d %v, want approved by person:u-1", code, done)
	}
	old := s.cookie(b)
	if code, _ := s.call(b, "DELETE", "/v1/session", nil, "X-CSRF-Token", str(me["csrf_token"])); code != http.StatusNoContent {
		t.Fatalf("sign-out = %d, want 204", code)
	}
	replay := browser(t)
	code, _ = s.call(replay, "GET", "/v1/session", nil, "Cookie", old.Name+"="+old.Value)
	if code != http.StatusUnauthorized {
		t.Fatalf("the signed-out cookie replayed = %d, want 401 (ended server-side)", code)
	}
}

// The provider rotates its signing key (the old one leaves the JWKS):
// countersign, which cached the old key set, fetches the new one and
// signs people in as before.
func TestSignInAfterKeyRotation(t *testing.T) {
	s := startSignIn(t)
	s.signIn(browser(t), "test-user2")
	s.idp.Rotate(t)
	b := browser(t)
	s.signIn(b, "test-user2")
	if code, me := s.call(b, "GET", "/v1/session", nil); code != http.StatusOK || me["member"] != "u-1" {
		t.Fatalf("after rotation GET /v1/session = %d %v", code, me)
	}
}

// Discovery: the provider's metadata is read from the issuer's
// /.well-known/openid-configuration, so the inbox is sent to the
// authorization endpoint it names, with PKCE (S256) and a nonce.
func TestSignInStartUsesDiscoveryPKCEAndNonce(t *testing.T) {
	s := startSignIn(t)
	b := browser(t)
	b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := b.Get(s.url + "/inbox/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	to, err := resp.Location()
	if err != nil {
		t.Fatalf("no redirect: %d", resp.StatusCode)
	}
	q := to.Query()
	if !strings.HasPrefix(to.String(), s.idp.Issuer+"/auth") || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") == "" || q.Get("client_id") != "countersign" {
		t.Fatalf("authorization request %s lacks discovery's endpoint, PKCE, nonce or state", to)
	}
	var flow *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "countersign_signin" {
			flow = c
		}
	}
	if flow == nil || flow.Value != q.Get("state") || !flow.HttpOnly || flow.SameSite != http.SameSiteLaxMode {
		t.Fatalf("flow cookie %+v, want HttpOnly, SameSite=Lax, holding the state", flow)
	}
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Sign-in and sign-out are entries of the tenant's audit log (SPEC §14);
// a refusal that matched no member names no tenant and is logged.
func TestSignInEventsAreRecorded(t *testing.T) {
	var logs lockedBuffer
	s := startSignInWith(t, servertest.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	b := browser(t)
	s.signIn(b, "test-user2")
	_, me := s.call(b, "GET", "/v1/session", nil)
	s.call(b, "DELETE", "/v1/session", nil, "X-CSRF-Token", str(me["csrf_token"]))
	s.idp.Forge(func(raw string) string { return raw + "x" })
	forged := browser(t)
	s.login(forged, s.startFlow(forged), "test-user2")
	s.idp.Forge(nil)
	if want := `msg="sign-in refused" via=code reason=token_invalid`; !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, logs.String())
	}
	admin := newClient(t, s.url, "tok-admin")
	var raw []byte
	eventually(t, 20*time.Second, "the sign-in and sign-out entries", func() bool {
		raw, _ = exportAudit(t, admin, "")
		return strings.Contains(string(raw), `"type":"dev.countersign.signout"`)
	})
	for _, want := range []string{`"actor":{"id":"u-1","kind":"person"}`, `"type":"dev.countersign.signin"`, `"via":"code"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the audit log lacks %s:\n%s", want, raw)
		}
	}
}
