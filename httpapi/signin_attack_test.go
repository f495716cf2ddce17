package httpapi_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/oidctest"
)

// jwtParts splits a compact JWS into its decoded header and claims.
func jwtParts(t *testing.T, raw string) (map[string]any, map[string]any) {
	t.Helper()
	parts := strings.Split(raw, ".")
	var h, c map[string]any
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(hb, &h) != nil || json.Unmarshal(cb, &c) != nil {
		t.Fatalf("not a JWT: %.60s", raw)
	}
	return h, c
}

func b64json(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// signRS256 signs header and claims with key.
func signRS256(t *testing.T, key *rsa.PrivateKey, h, c map[string]any) string {
	t.Helper()
	h["alg"] = "RS256"
	in := b64json(h) + "." + b64json(c)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, 5 /* crypto.SHA256 */, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// Each forged ID token reaches countersign through the real code flow
// (the provider's token answer carries it) and is refused: a page says
// so, no session cookie is set, and no session exists.
func TestSignInRefusesForgedIDTokens(t *testing.T) {
	s := startSignIn(t)
	stranger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	resign := func(edit func(h, c map[string]any)) func(string) string {
		return func(raw string) string {
			h, c := jwtParts(t, raw)
			edit(h, c)
			key, _ := s.idp.SigningKey()
			return signRS256(t, key, h, c)
		}
	}
	cases := []struct {
		name  string
		forge func(string) string
	}{
		{"wrong aud", resign(func(_, c map[string]any) { c["aud"] = []string{"another-client"} })},
		{"wrong iss", resign(func(_, c map[string]any) { c["iss"] = "https://idp.evil.example" })},
		{"wrong nonce", resign(func(_, c map[string]any) { c["nonce"] = "not-the-flows-nonce" })},
		{"expired", resign(func(_, c map[string]any) {
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
		})},
		{"unknown kid", func(raw string) string {
			h, c := jwtParts(t, raw)
			h["kid"] = "key-nobody-published"
			return signRS256(t, stranger, h, c)
		}},
		{"known kid, another key", func(raw string) string {
			h, c := jwtParts(t, raw)
			return signRS256(t, stranger, h, c)
		}},
		{"alg none", func(raw string) string {
			h, c := jwtParts(t, raw)
			h["alg"] = "none"
			return b64json(h) + "." + b64json(c) + "."
		}},
		{"HMAC with the client secret", func(raw string) string {
			h, c := jwtParts(t, raw)
			h["alg"] = "HS256"
			in := b64json(h) + "." + b64json(c)
			m := hmac.New(sha256.New, []byte(oidctest.ClientSecret))
			m.Write([]byte(in))
			return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.idp.Forge(c.forge)
			defer s.idp.Forge(nil)
			b := browser(t)
			resp, body := s.login(b, s.startFlow(b), oidctest.User)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "No session was made") {
				t.Fatalf("forged token: %d at %s, want 403 saying no session; body %.300s", resp.StatusCode, resp.Request.URL, body)
			}
			if ck := s.cookie(b); ck != nil {
				t.Fatalf("forged token: a session cookie was set: %v", ck)
			}
			if code, _ := s.call(b, "GET", "/v1/session", nil); code != http.StatusUnauthorized {
				t.Fatalf("forged token: GET /v1/session = %d, want 401", code)
			}
		})
	}
	// The same provider, not forging, signs in (the refusals were the
	// tokens', not the setup's).
	s.signIn(browser(t), oidctest.User)
}

// A callback whose state is not this browser's, and a callback replayed
// after it was used, are refused and issue nothing.
func TestSignInRefusesStateMismatchAndReplay(t *testing.T) {
	s := startSignIn(t)
	b := browser(t)
	form := s.startFlow(b)
	u, _ := url.Parse(s.url)
	b.Jar.SetCookies(u, []*http.Cookie{{Name: "countersign_signin", Value: "another-browsers-state", Path: "/"}})
	resp, body := s.login(b, form, oidctest.User)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "state does not match") || s.cookie(b) != nil {
		t.Fatalf("state mismatch: %d, cookie %v; body %.300s", resp.StatusCode, s.cookie(b), body)
	}

	var callback *url.URL
	b = browser(t)
	b.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == "/inbox/signin/callback" {
			callback = req.URL
		}
		return nil
	}
	s.signIn(b, oidctest.User)
	if callback == nil {
		t.Fatal("the sign-in never reached the callback")
	}
	replay := browser(t)
	code, _ := s.call(replay, "GET", callback.RequestURI(), nil, "Cookie", "countersign_signin="+callback.Query().Get("state"))
	if code != http.StatusBadRequest || s.cookie(replay) != nil {
		t.Fatalf("replayed callback = %d, cookie %v; want 400 and no session", code, s.cookie(replay))
	}
}
