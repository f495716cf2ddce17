package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/countersign/countersign/internal/testkit/oidctest"
)

// /v1/rpc authenticates a sign-in session's bearer token (countersign
// login) through approvals.Authenticate's sessions hook, as every HTTP
// route does; the session cookie alone does not open it (a page of
// another site could make a browser send the cookie with an upgrade),
// and a token that is neither the config's nor a session's is 401.
func TestRPCTakesSessionTokenNotCookie(t *testing.T) {
	s := startSignIn(t)
	b := browser(t)
	s.signIn(b, oidctest.User)
	session := s.cookie(b)
	if session == nil {
		t.Fatal("no session cookie after sign-in")
	}
	ws := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/rpc"
	dial := func(h http.Header) int {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
		if err == nil {
			conn.CloseNow()
			return http.StatusSwitchingProtocols
		}
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return resp.StatusCode
	}
	for _, c := range []struct {
		name string
		h    http.Header
		want int
	}{
		{"the session's token as bearer", http.Header{"Authorization": {"Bearer " + session.Value}}, http.StatusSwitchingProtocols},
		{"the session cookie alone", http.Header{"Cookie": {session.Name + "=" + session.Value}}, http.StatusUnauthorized},
		{"an unknown token", http.Header{"Authorization": {"Bearer not-a-session"}}, http.StatusUnauthorized},
	} {
		if got := dial(c.h); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
