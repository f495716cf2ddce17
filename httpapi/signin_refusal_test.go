package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/oidctest"
)

// With claim email, only email_verified: true signs in (SPEC §13): a
// verified ID token that names the email but leaves email_verified out,
// or says false (or "true", a string), is refused,
// and the refusal is an audit entry of the tenant of the member whose
// email it names.
func TestSignInRefusesAnEmailNotSaidVerified(t *testing.T) {
	s := startSignIn(t)
	for name, edit := range map[string]func(map[string]any){
		"absent": func(c map[string]any) { delete(c, "email_verified") },
		"false":  func(c map[string]any) { c["email_verified"] = false },
		"string": func(c map[string]any) { c["email_verified"] = "true" },
	} {
		t.Run(name, func(t *testing.T) {
			s.idp.Forge(func(raw string) string {
				h, c := jwtParts(t, raw)
				c["email"] = oidctest.Email // the provider's own token has none (it is in userinfo)
				edit(c)
				key, _ := s.idp.SigningKey()
				return signRS256(t, key, h, c)
			})
			defer s.idp.Forge(nil)
			b := browser(t)
			resp, body := s.login(b, s.startFlow(b), oidctest.User)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "No session was made") {
				t.Fatalf("%d at %s, want 403 saying no session; body %.300s", resp.StatusCode, resp.Request.URL, body)
			}
			if ck := s.cookie(b); ck != nil {
				t.Fatalf("a session cookie was set: %v", ck)
			}
		})
	}
	admin := newClient(t, s.url, "tok-admin")
	eventually(t, 20*time.Second, "three refusal entries of acme's u-1", func() bool {
		r := admin.do("GET", "/v1/audit", nil)
		raw := r.raw
		return r.status == http.StatusOK && strings.Count(string(raw), `"type":"dev.countersign.signin.refused"`) == 3 &&
			strings.Contains(string(raw), `"actor":{"id":"u-1","kind":"person"}`)
	})
	if metricLine(t, s.url, `countersign_signin_refusals_total{reason="email_unverified"} 1`) {
		t.Error("a refusal that matched a member was also counted as matching nobody")
	}
}

// A refusal that matched nobody (a forged token says nothing to trust, a
// state from another browser names nobody) is counted by reason in
// /metrics, and is no audit entry.
func TestSignInRefusalOfNobodyIsCounted(t *testing.T) {
	s := startSignIn(t)
	s.idp.Forge(func(raw string) string { return raw + "x" })
	b := browser(t)
	s.login(b, s.startFlow(b), oidctest.User)
	s.idp.Forge(nil)
	other := browser(t)
	form := s.startFlow(other)
	resp, err := browser(t).Get(s.url + "/inbox/signin/callback?state=" + form.Query().Get("state") + "&code=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, want := range []string{`countersign_signin_refusals_total{reason="token_invalid"} 1`, `countersign_signin_refusals_total{reason="state_mismatch"} 1`} {
		if !metricLine(t, s.url, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	s.signIn(browser(t), oidctest.User) // its entry comes after the refusals'
	admin := newClient(t, s.url, "tok-admin")
	var raw []byte
	eventually(t, 20*time.Second, "the sign-in's entry", func() bool {
		r := admin.do("GET", "/v1/audit", nil)
		raw = r.raw
		return r.status == http.StatusOK && strings.Contains(string(raw), `"type":"dev.countersign.signin"`)
	})
	if strings.Contains(string(raw), "signin.refused") {
		t.Errorf("a refusal that matched nobody is in a tenant's audit log:\n%s", raw)
	}
}

// A bearer token that does not authenticate is 401 Unauthenticated, with
// sign-in configured as without it (SPEC §5, §13).
func TestBadBearerIsUnauthenticatedWithOIDC(t *testing.T) {
	s := startSignIn(t)
	for _, url := range []string{s.url, startAcme(t)} {
		for _, path := range []string{"/v1/requests", "/v1/grants", "/v1/session"} {
			r := newClient(t, url, "no-such-token").do("GET", path, nil)
			if r.status != http.StatusUnauthorized || r.body["error"] != "Unauthenticated" {
				t.Errorf("GET %s%s with a bad token: %d %v, want 401 Unauthenticated", url, path, r.status, r.body["error"])
			}
		}
	}
}
