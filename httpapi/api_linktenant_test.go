package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/links"
)

// A decision link names a tenant and a person: a person of another tenant
// with the same member id, signed in, is not that person, and their click
// decides nothing (linkNotSignedIn compares the tenant too).
func TestDecisionLinkRefusesSameMemberOfAnotherTenant(t *testing.T) {
	s := startSignIn(t, func(y string) string {
		y = strings.Replace(y, "{id: v-1, email:", "{id: u-1, email:", 1)
		return strings.Replace(y, "{id: agt_x, member: v-1}", "{id: agt_x, member: u-1}", 1)
	})
	agent := newClient(t, s.url, "tok-main")
	rec := agent.pending()
	claim := links.Claim{Tenant: "acme", Request: domain.RequestID(str(rec["id"])), Revision: uint64(num(rec["revision"])),
		Person: "u-1", Decision: links.Approve, Deadline: time.Now().Add(time.Hour)}
	link := s.url + "/d/" + links.Mint([]byte("link-secret-of-the-signin-tests"), claim)

	globex := browser(t)
	s.signIn(globex, globexUser(s))
	if _, me := s.call(globex, "GET", "/v1/session", nil); me["tenant"] != "globex" || me["member"] != "u-1" {
		t.Fatalf("session = %v, want globex u-1", me)
	}
	resp, err := globex.Post(link, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "Nothing was decided") {
		t.Fatalf("click by globex's u-1: %d %.300s", resp.StatusCode, body)
	}
	if got := str(agent.get(str(rec["id"]))["status"]); got != "pending" {
		t.Fatalf("after globex's u-1 clicked acme's link the request is %s, want pending", got)
	}
}
