package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/links"
)

// linksPeopleYAML: decision links on (no sign-in: a link answers as its
// person), people with names, finance allowing refunds two at a time.
const linksPeopleYAML = `public_url: https://approvals.example.com
link_secret_env: LINKS_PEOPLE_TEST_SECRET
tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, name: Ada Lovelace, policy: {allow: ["*"]}}
      - {id: u-2, name: Grace Hopper, policy: {allow: ["*"]}}
      - {id: u-3, name: Edsger Dijkstra, policy: {allow: ["*"]}}
    groups:
      - {id: finance, members: [u-2, u-3]}
    approval_policies:
      - {id: refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, approve: 2}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read]}
      - {token: tok-u1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
`

const linksPeopleSecret = "the link pages' test key"

func startLinksPeople(t *testing.T) string {
	t.Setenv("LINKS_PEOPLE_TEST_SECRET", linksPeopleSecret)
	return servertest.Start(t, servertest.WithConfig(linksPeopleYAML)).URL
}

// linkTo mints person's approve link for rec at revision rev.
func linkTo(t *testing.T, base string, rec map[string]any, person string, rev uint64) string {
	t.Helper()
	return base + "/d/" + links.Mint([]byte(linksPeopleSecret), links.Claim{Tenant: "acme", Request: domain.RequestID(str(rec["id"])),
		Revision: rev, Person: domain.MemberID(person), Decision: links.Approve, Deadline: ts(t, "deadline_at", rec["deadline_at"])})
}

// open GETs or POSTs a link page.
func open(t *testing.T, method, link string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func wantPage(t *testing.T, what string, code int, body string, wantCode int, says ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: %d, want %d: %s", what, code, wantCode, body)
		return
	}
	for _, s := range says {
		if !strings.Contains(body, s) {
			t.Errorf("%s: the page does not say %q: %s", what, s, body)
		}
	}
}

// A group's request (SPEC §12): u-3's link, sent at revision 0, still
// answers after u-2's allow (only another person's approval came
// since), and completes the quorum. The pages name people by name, the
// id beside it: whom the link is for, who has allowed, who decided.
func TestDecisionLinkPagesNamePeopleAndTakeAQuorumAllow(t *testing.T) {
	base := startLinksPeople(t)
	agent, u2 := newClient(t, base, "tok-main"), newClient(t, base, "tok-u2")
	rec := agent.submit(map[string]any{"tool": "issue_refund", "arguments": map[string]any{"amount": 120}})
	link := linkTo(t, base, rec, "u-3", 0)
	u2.answer(rec, "allow", "once").want(t, "u-2 allows", http.StatusOK)

	code, body := open(t, http.MethodGet, link)
	wantPage(t, "GET after u-2's allow", code, body, http.StatusOK, "This link answers for Edsger Dijkstra (u-3)",
		"1 of 2 approved (person Grace Hopper (u-2))", "Approve this call once")
	code, body = open(t, http.MethodPost, link)
	wantPage(t, "POST after u-2's allow", code, body, http.StatusOK, "Your answer was recorded: approved by person Edsger Dijkstra (u-3)",
		"2 of 2 approved (person Grace Hopper (u-2), person Edsger Dijkstra (u-3))")
	if got := u2.get(str(rec["id"])); got["status"] != "approved" || len(objects(got["approvals"])) != 2 {
		t.Fatalf("after u-3's link: %v", got)
	}
}

// Any other change since the link's revision (here u-1 allowed the first
// stage of a shell call from the inbox's API) makes the link stale: GET
// and POST say so in the HTTP API's own words for an answer at that
// revision (SPEC §12), name who it waits on, and change nothing.
func TestDecisionLinkStaleInTheHTTPAPIsWords(t *testing.T) {
	base := startLinksPeople(t)
	agent, u1 := newClient(t, base, "tok-main"), newClient(t, base, "tok-u1")
	cmd := "ls -la && rm -rf /tmp/x"
	rec := agent.submit(map[string]any{"tool": "Bash", "arguments": map[string]any{"command": cmd},
		"subject": map[string]any{"kind": "shell", "command": cmd}})
	link := linkTo(t, base, rec, "u-1", 0)
	u1.answer(rec, "allow", "once").want(t, "u-1 allows stage 1", http.StatusOK)
	refused := u1.do(http.MethodPost, "/v1/requests/"+str(rec["id"]), map[string]any{"expected": 0, "decision": "allow"})
	var p struct{ Detail string }
	if err := json.Unmarshal(refused.raw, &p); err != nil || refused.status != http.StatusConflict || p.Detail == "" {
		t.Fatalf("HTTP at revision 0: %d %s", refused.status, refused.raw)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		code, body := open(t, method, link)
		wantPage(t, method+" of the stale link", code, body, http.StatusConflict, "("+p.Detail+")",
			"it waits on person Ada Lovelace (u-1)", "Nothing was changed")
	}
	if got := u1.get(str(rec["id"])); got["status"] != "pending" || num(got["revision"]) != 1 {
		t.Fatalf("the stale link changed the request: %v", got)
	}
}

// With sign-in on, a link's refusals name both people by name beside
// their ids: whom the link answers for, and who is signed in (the
// name their ID token gave).
func TestDecisionLinkRefusalsNamePeople(t *testing.T) {
	s := startSignIn(t, func(y string) string {
		return strings.Replace(y, "{id: u-1, email:", "{id: u-1, name: Ada Lovelace, email:", 1)
	})
	rec := newClient(t, s.url, "tok-main").pending()
	claim := links.Claim{Tenant: "acme", Request: domain.RequestID(str(rec["id"])), Revision: uint64(num(rec["revision"])),
		Person: "u-1", Decision: links.Approve, Deadline: ts(t, "deadline_at", rec["deadline_at"])}
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
	code, body := post(browser(t))
	wantPage(t, "no session", code, body, http.StatusForbidden, "This link answers only for Ada Lovelace (u-1), signed in",
		"This link answers for Ada Lovelace (u-1).")
	other := browser(t)
	s.signIn(other, globexUser(s))
	code, body = post(other)
	wantPage(t, "v-1 signed in", code, body, http.StatusForbidden, "This link was sent to Ada Lovelace (u-1), and you are signed in as Test User (v-1).")
	if strings.Contains(body, "signed in as v-1") {
		t.Errorf("v-1's name is not shown: %s", body)
	}
}
