package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/oidctest"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// GET /v1/people names the caller and the tenant's people from the
// config's name (SPEC §10 "People by name"); it needs approvals:read and
// shows no other tenant's people.
func TestAPIPeopleByName(t *testing.T) {
	y := strings.Replace(acmeYAML, "      - id: u-1\n", "      - id: u-1\n        name: Ada Lovelace\n", 1)
	url := servertest.Start(t, servertest.WithConfig(y)).URL
	body := newClient(t, url, tokPerson).do("GET", "/v1/people", nil).want(t, "people", http.StatusOK).body
	you := obj(body["you"])
	if you["kind"] != "person" || you["id"] != "u-1" || you["name"] != "Ada Lovelace" {
		t.Errorf("you = %v, want person u-1 named Ada Lovelace", you)
	}
	got := map[string]any{}
	for _, p := range objects(body["items"]) {
		got[str(p["id"])] = p["name"]
	}
	if len(got) != 3 || got["u-1"] != "Ada Lovelace" || got["u-2"] != nil || got["v-1"] != nil {
		t.Errorf("people = %v, want u-1 (Ada Lovelace), u-2, u-3 and no globex member", got)
	}
	newClient(t, url, tokPersonNone).do("GET", "/v1/people", nil).wantProblem(t, "people without approvals:read", http.StatusForbidden, "Forbidden", "")
	newClient(t, url, "nope").do("GET", "/v1/people", nil).wantProblem(t, "people unauthenticated", http.StatusUnauthorized, "Unauthenticated", "")
}

// A member the config does not name is named by the ID token's name claim
// once they sign in: their session and GET /v1/people say it.
func TestSignInNameClaimNamesTheMember(t *testing.T) {
	s := startSignIn(t)
	b := browser(t)
	s.signIn(b, oidctest.User)
	_, me := s.call(b, "GET", "/v1/session", nil)
	if me["member"] != "u-1" || me["name"] != "Test User2" {
		t.Fatalf("session = %v, want u-1 named Test User2", me)
	}
	_, people := s.call(b, "GET", "/v1/people", nil)
	if you := obj(people["you"]); you["name"] != "Test User2" {
		t.Errorf("people you = %v, want named Test User2", you)
	}
}
