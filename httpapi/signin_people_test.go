package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/oidctest"
	"github.com/countersign/countersign/links"
)

// globexUser is the provider's user whose email is globex's v-1.
func globexUser(s *signInServer) string {
	u, _ := url.Parse(s.idp.Issuer)
	return "test-user@" + u.Hostname()
}

// A member of another tenant, signed in, neither reads nor answers here.
func TestSignInOtherTenantCannotReadOrAnswer(t *testing.T) {
	s := startSignIn(t)
	rec := newClient(t, s.url, "tok-main").pending()
	b := browser(t)
	s.signIn(b, globexUser(s))
	_, me := s.call(b, "GET", "/v1/session", nil)
	if me["tenant"] != "globex" || me["member"] != "v-1" {
		t.Fatalf("session = %v, want globex v-1", me)
	}
	if code, _ := s.call(b, "GET", "/v1/requests/"+str(rec["id"]), nil); code != http.StatusNotFound {
		t.Errorf("GET acme's request with globex's cookie = %d, want 404", code)
	}
	if code, list := s.call(b, "GET", "/v1/requests?status=pending", nil); code != http.StatusOK || len(objects(list["items"])) != 0 {
		t.Errorf("globex's inbox = %d %v, want empty", code, list)
	}
	answer := map[string]any{"expected": num(rec["revision"]), "decision": "allow"}
	if code, _ := s.call(b, "POST", "/v1/requests/"+str(rec["id"]), answer, "X-CSRF-Token", str(me["csrf_token"])); code != http.StatusNotFound {
		t.Errorf("answer acme's request with globex's cookie = %d, want 404", code)
	}
	if got := str(newClient(t, s.url, "tok-main").get(str(rec["id"]))["status"]); got != "pending" {
		t.Errorf("the request is %s, want pending", got)
	}
}

// A person the provider knows but no member's email names gets a page
// that says so, and no session.
func TestSignInNoMatchNoSession(t *testing.T) {
	s := startSignIn(t, func(y string) string {
		return strings.Replace(y, "test-user@zitadel.ch", "someone-else@example.com", 1)
	})
	b := browser(t)
	resp, body := s.login(b, s.startFlow(b), globexUser(s))
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "no member has the email test-user@zitadel.ch") || !strings.Contains(body, "no session was made") {
		t.Fatalf("no match: %d; body %.400s", resp.StatusCode, body)
	}
	if s.cookie(b) != nil {
		t.Fatalf("no match: a session cookie was set")
	}
}

// A claim that names members of two tenants signs no one in.
func TestSignInAmbiguousNoSession(t *testing.T) {
	s := startSignIn(t, func(y string) string { return strings.Replace(y, "test-user@zitadel.ch", oidctest.Email, 1) })
	b := browser(t)
	resp, body := s.login(b, s.startFlow(b), oidctest.User)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "more than one member has the email") || s.cookie(b) != nil {
		t.Fatalf("ambiguous: %d, cookie %v; body %.400s", resp.StatusCode, s.cookie(b), body)
	}
}

// With sign-in on, a decision link answers only for the person it names,
// signed in: anyone else's click explains itself and decides nothing.
func TestDecisionLinkNeedsItsPersonSignedIn(t *testing.T) {
	s := startSignIn(t)
	agent := newClient(t, s.url, "tok-main")
	rec := agent.pending()
	claim := links.Claim{Tenant: "acme", Request: domain.RequestID(str(rec["id"])), Revision: uint64(num(rec["revision"])),
		Person: "u-1", Decision: links.Approve, Deadline: time.Now().Add(time.Hour)}
	link := s.url + "/d/" + links.Mint([]byte("link-secret-of-the-signin-tests"), claim)
	post := func(b *http.Client) (int, string) {
		resp, err := b.Post(link, "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if code, body := post(browser(t)); code != http.StatusForbidden || !strings.Contains(body, "answers only for u-1, signed in") {
		t.Fatalf("click without a session: %d %.300s", code, body)
	}
	other := browser(t)
	s.signIn(other, globexUser(s))
	if code, body := post(other); code != http.StatusForbidden || !strings.Contains(body, "you are signed in as Test User (v-1)") {
		t.Fatalf("click by v-1: %d %.300s", code, body)
	}
	if got := str(agent.get(str(rec["id"]))["status"]); got != "pending" {
		t.Fatalf("after others' clicks the request is %s, want pending", got)
	}
	me := browser(t)
	s.signIn(me, oidctest.User)
	if code, body := post(me); code != http.StatusOK || !strings.Contains(body, "Your answer was recorded") {
		t.Fatalf("click by u-1 signed in: %d %.300s", code, body)
	}
	if got := str(agent.get(str(rec["id"]))["status"]); got != "approved" {
		t.Fatalf("after u-1's click the request is %s, want approved", got)
	}
}
