package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/oidctest"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// endWithin is the tests' deadline for a session's end to reach what it
// holds; the contract is 1 s (SPEC §10), 3 s keeps a loaded machine out
// of the way.
const endWithin = 3 * time.Second

// withoutU1 removes acme's u-1 (the provider's user), its token, and moves
// agt_main to u-2.
func withoutU1(y string) string {
	for _, cut := range []string{"      - {id: u-1, email: " + oidctest.Email + `, policy: {allow: ["*"]}}` + "\n",
		`      - {token: tok-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}` + "\n"} {
		if !strings.Contains(y, cut) {
			panic("withoutU1: the config changed: " + cut)
		}
		y = strings.Replace(y, cut, "", 1)
	}
	return strings.Replace(y, "{id: agt_main, member: u-1}", "{id: agt_main, member: u-2}", 1)
}

// startSignInFile is startSignIn run from a config file, which the test
// may rewrite and reload; it returns the file's path and its first text.
func startSignInFile(t *testing.T) (*signInServer, string, string) {
	t.Helper()
	path, first := filepath.Join(t.TempDir(), "countersign.yaml"), ""
	s := startSignInWith(t, servertest.WithConfigFile(path), func(y string) string {
		first = y
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		return y
	})
	return s, path, first
}

func (s *signInServer) reload(path, yaml string) {
	s.t.Helper()
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.App.Reload(ctx); err != nil {
		s.t.Fatal(err)
	}
}

// holdSession holds a long-poll on a pending request and an event stream
// with b's session cookie, and returns once both are held.
func (s *signInServer) holdSession(b *http.Client) (<-chan servertest.Answer, *servertest.SSE) {
	s.t.Helper()
	rec := newClient(s.t, s.url, "tok-main").pending()
	poll, _ := http.NewRequest(http.MethodGet, s.url+"/v1/requests/"+str(rec["id"])+"?wait=60s", nil)
	events, _ := http.NewRequest(http.MethodGet, s.url+"/v1/events", nil)
	held := servertest.HoldRequest(s.t, b, poll)
	waitHeld(s.t, s.url, 1)
	return held, servertest.HoldSSE(s.t, b, events)
}

// wantEnded: the held long-poll answered 401 Unauthenticated and the
// stream closed, both within endWithin.
func wantEnded(t *testing.T, poll <-chan servertest.Answer, stream *servertest.SSE, why string) {
	t.Helper()
	select {
	case a := <-poll:
		if a.Err != nil || a.Status != http.StatusUnauthorized || !strings.Contains(a.Body, `"error":"Unauthenticated"`) {
			t.Errorf("%s: the held long-poll answered %d %v %s, want 401 Unauthenticated", why, a.Status, a.Err, a.Body)
		}
	case <-time.After(endWithin):
		t.Errorf("%s: the session's held long-poll is still open after %v", why, endWithin)
	}
	deadline := time.After(endWithin)
	for {
		select {
		case _, ok := <-stream.Data:
			if !ok {
				return
			}
		case <-deadline:
			t.Errorf("%s: the session's event stream is still open after %v", why, endWithin)
			return
		}
	}
}

// A member removed by a reload loses their sign-in session as a removed
// token does (SPEC §10): its held long-poll answers 401, its event stream
// closes, the session no longer authenticates — and stays ended when the
// member comes back.
func TestSignInRemovedMemberEndsSession(t *testing.T) {
	s, path, first := startSignInFile(t)
	b := browser(t)
	s.signIn(b, oidctest.User)
	poll, stream := s.holdSession(b)

	s.reload(path, withoutU1(first))
	wantEnded(t, poll, stream, "member removed")
	if code, _ := s.call(b, "GET", "/v1/session", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /v1/session after the member was removed = %d, want 401", code)
	}
	s.reload(path, first)
	if code, _ := s.call(b, "GET", "/v1/session", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /v1/session once the member is back = %d, want 401: the session ended", code)
	}
}

// Signing out ends what the session holds (SPEC §13): the held long-poll
// answers 401 and the event stream closes.
func TestSignOutEndsWhatTheSessionHolds(t *testing.T) {
	s := startSignIn(t)
	b := browser(t)
	s.signIn(b, oidctest.User)
	_, me := s.call(b, "GET", "/v1/session", nil)
	poll, stream := s.holdSession(b)
	if code, _ := s.call(b, "DELETE", "/v1/session", nil, "X-CSRF-Token", str(me["csrf_token"])); code != http.StatusNoContent {
		t.Fatalf("sign out: %d", code)
	}
	wantEnded(t, poll, stream, "signed out")
}
