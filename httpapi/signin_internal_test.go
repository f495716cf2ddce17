package httpapi

import (
	"net/http"
	"testing"
)

// Behind https the cookies are Secure and carry the __Host- prefix
// (host-only, path /); over http (development) neither.
func TestSignInCookiesBehindHTTPS(t *testing.T) {
	for _, secure := range []bool{true, false} {
		s := &SignInConfig{Secure: secure}
		c := s.cookie(s.cookieName(), "v", http.SameSiteStrictMode, 60)
		wantName := map[bool]string{true: "__Host-countersign_session", false: "countersign_session"}[secure]
		if c.Name != wantName || c.Secure != secure || c.Path != "/" || c.Domain != "" || !c.HttpOnly {
			t.Errorf("secure=%v: cookie %+v, want %s, Secure %v, host-only at /, HttpOnly", secure, c, wantName, secure)
		}
		if f := s.flowCookieName(); (f == "__Host-countersign_signin") != secure {
			t.Errorf("secure=%v: flow cookie %s", secure, f)
		}
		if err := c.Valid(); err != nil {
			t.Errorf("secure=%v: %v", secure, err)
		}
	}
}
