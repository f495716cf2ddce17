package httpapi_test

import (
	"net/http"
	"testing"
)

// TestAPIGrants: deny grants win over allow grants, session grants match
// only their session, revoked grants stop matching at once; GET /v1/grants
// filters and shows revoked grants only with revoked=true; DELETE revokes
// (SPEC §2 step 3, §5).
func TestAPIGrants(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person, person2, admin := newClient(t, url, tokMain), newClient(t, url, tokPerson), newClient(t, url, tokPerson2), newClient(t, url, tokAdmin)
	deploy := func(session string) map[string]any {
		body := map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}}
		if session != "" {
			body["session"] = session
		}
		return main.submit(body)
	}
	status := func(session string) (string, string) {
		rec := deploy(session)
		return str(rec["status"]), by(rec)
	}

	person.answer(deploy("s1"), "allow", "session").want(t, "allow for s1", http.StatusOK)
	allow := grantsOf(t, person, "?effect=allow")
	if len(allow) != 1 {
		t.Fatalf("allow grants = %s, want 1", jsonString(allow))
	}
	allowID := str(allow[0]["id"])
	if st, b := status("s1"); st != "approved" || b != "grant/"+allowID {
		t.Errorf("s1 with a session grant: %s by %s, want approved by grant/%s", st, b, allowID)
	}
	if st, _ := status("s2"); st != "pending" {
		t.Errorf("s2 with s1's grant: %s, want pending", st)
	}
	person.answer(deploy(""), "deny", "lifetime").want(t, "deny for lifetime", http.StatusOK)
	deny := grantsOf(t, person, "?effect=deny")
	if len(deny) != 1 || str(deny[0]["scope"]) != "lifetime" || str(deny[0]["agent"]) != "agt_main" {
		t.Fatalf("deny grants = %s, want one lifetime deny for agt_main", jsonString(deny))
	}
	denyID := str(deny[0]["id"])
	if st, b := status("s1"); st != "denied" || b != "grant/"+denyID {
		t.Errorf("s1 with allow (session) and deny (lifetime) grants: %s by %s, want denied by grant/%s", st, b, denyID)
	}

	// Another member's agent gets a grant that u-1 does not see.
	other := newClient(t, url, tokOther).pending()
	person2.answer(other, "allow", "lifetime").want(t, "u-2 allows for lifetime", http.StatusOK)

	for _, tc := range []struct {
		name  string
		c     *client
		query string
		want  []string
	}{
		{"member's grants", person, "", []string{allowID, denyID}},
		{"by agent", person, "?agent=agt_main", []string{allowID, denyID}},
		{"by other agent", person, "?agent=agt_sub", nil},
		{"by effect", person, "?effect=deny", []string{denyID}},
		{"by scope", person, "?scope=session", []string{allowID}},
		{"by scope lifetime and effect allow", person, "?scope=lifetime&effect=allow", nil},
		{"agent sees its member's grants", main, "", []string{allowID, denyID}},
		{"another member", person2, "?agent=agt_main", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(grantsOf(t, tc.c, tc.query))
			if len(got) != len(tc.want) {
				t.Fatalf("grants %v, want %v", got, tc.want)
			}
			for _, id := range tc.want {
				if !contains(got, id) {
					t.Errorf("grants %v lack %s", got, id)
				}
			}
		})
	}
	if got := grantsOf(t, person2, ""); len(got) != 1 || str(got[0]["agent"]) != "agt_other" {
		t.Errorf("u-2's grants = %s, want only agt_other's", jsonString(got))
	}
	if got := grantsOf(t, admin, ""); len(got) != 3 {
		t.Errorf("admin sees %d grants, want all 3", len(got))
	}
	page := person.do("GET", "/v1/grants?limit=1", nil).want(t, "grants page", http.StatusOK)
	if len(objects(page.body["items"])) != 1 || str(page.body["next_cursor"]) == "" {
		t.Errorf("limit=1 page: %s, want one item and a cursor", page.raw)
	} else {
		rest := grantsOf(t, person, "?limit=1&cursor="+str(page.body["next_cursor"]))
		if len(rest) != 1 || str(rest[0]["id"]) == str(objects(page.body["items"])[0]["id"]) {
			t.Errorf("second page = %s", jsonString(rest))
		}
	}
	for _, q := range []struct{ query, field string }{{"?effect=maybe", "effect"}, {"?scope=forever", "scope"}, {"?revoked=yes", "revoked"}, {"?limit=501", "limit"}} {
		person.do("GET", "/v1/grants"+q.query, nil).wantProblem(t, "grants"+q.query, http.StatusBadRequest, "InvalidRequest", q.field)
	}

	// Revoke the deny grant: it stops matching at once.
	person2.do("DELETE", "/v1/grants/"+denyID, nil).wantProblem(t, "another member revokes", http.StatusNotFound, "GrantNotFound", "")
	r := person.do("DELETE", "/v1/grants/"+denyID, nil).want(t, "revoke", http.StatusOK)
	if str(r.body["id"]) != denyID || r.body["revoked_at"] == nil {
		t.Errorf("revoke answer = %s, want the grant with revoked_at", r.raw)
	}
	ts(t, "revoked_at", r.body["revoked_at"])
	if st, b := status("s1"); st != "approved" || b != "grant/"+allowID {
		t.Errorf("s1 after revoking the deny: %s by %s, want approved by grant/%s", st, b, allowID)
	}
	if got := ids(grantsOf(t, person, "")); contains(got, denyID) {
		t.Errorf("a revoked grant is listed without revoked=true: %v", got)
	}
	if got := grantsOf(t, person, "?revoked=true&effect=deny"); len(got) != 1 || got[0]["revoked_at"] == nil {
		t.Errorf("revoked=true: %s, want the revoked deny grant", jsonString(got))
	}
	person.do("DELETE", "/v1/grants/"+allowID, nil).want(t, "revoke the allow", http.StatusOK)
	if st, _ := status("s1"); st != "pending" {
		t.Errorf("s1 after revoking every grant: %s, want pending", st)
	}

	for _, id := range []string{"grt_01JC0000000000000000000000", "nonsense"} {
		person.do("DELETE", "/v1/grants/"+id, nil).wantProblem(t, "revoke "+id, http.StatusNotFound, "GrantNotFound", "")
	}
}

// TestAPIRules: GET/POST /v1/agents/{id}/rules and DELETE …/{rule_id}.
func TestAPIRules(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	person := newClient(t, url, tokPerson)
	rules := func(c *client, agent string) []map[string]any {
		t.Helper()
		return objects(c.do("GET", "/v1/agents/"+agent+"/rules", nil).want(t, "rules of "+agent, http.StatusOK).body["items"])
	}
	texts := func(rs []map[string]any) []string {
		var out []string
		for _, r := range rs {
			out = append(out, str(r["text"]))
		}
		return out
	}
	if got := texts(rules(person, "agt_programmer")); len(got) != 1 || got[0] != "Reading files in the repository is always fine." {
		t.Errorf("configured rules = %v", got)
	}
	if got := rules(newClient(t, url, tokMain), "agt_programmer"); len(got) != 1 {
		t.Errorf("agt_main reads agt_programmer's rules: %d, want 1", len(got))
	}

	text := "Refunds under 50 GBP for a confirmed duplicate charge may be issued."
	r := person.do("POST", "/v1/agents/agt_sub/rules", map[string]any{"text": text}).want(t, "add rule", http.StatusCreated)
	id := str(r.body["id"])
	if !ruleIDPattern.MatchString(id) || str(r.body["agent"]) != "agt_sub" || str(r.body["text"]) != text {
		t.Errorf("added rule = %s", r.raw)
	}
	if got := texts(rules(person, "agt_sub")); len(got) != 1 || got[0] != text {
		t.Errorf("agt_sub rules = %v, want [%q]", got, text)
	}
	person.do("POST", "/v1/agents/agt_sub/rules", map[string]any{"text": "  "}).wantProblem(t, "blank rule", http.StatusBadRequest, "InvalidRequest", "text")
	person.do("POST", "/v1/agents/agt_sub/rules", map[string]any{"text": "x", "effect": "maybe"}).wantProblem(t, "bad effect", http.StatusBadRequest, "InvalidRequest", "effect")
	newClient(t, url, tokPerson2).do("POST", "/v1/agents/agt_sub/rules", map[string]any{"text": "x"}).wantProblem(t, "another member adds", http.StatusNotFound, "NotFound", "")
	newClient(t, url, tokPerson2).do("GET", "/v1/agents/agt_sub/rules", nil).wantProblem(t, "another member reads", http.StatusNotFound, "NotFound", "")
	person.do("GET", "/v1/agents/agt_nobody/rules", nil).wantProblem(t, "unknown agent", http.StatusNotFound, "NotFound", "")
	newClient(t, url, tokPerson2).do("DELETE", "/v1/agents/agt_sub/rules/"+id, nil).wantProblem(t, "another member deletes", http.StatusNotFound, "NotFound", "")

	d := person.do("DELETE", "/v1/agents/agt_sub/rules/"+id, nil)
	if d.status != http.StatusOK && d.status != http.StatusNoContent {
		t.Errorf("delete rule: %d, want 200 or 204; %s", d.status, d.raw)
	}
	if got := rules(person, "agt_sub"); len(got) != 0 {
		t.Errorf("rules after delete = %s, want none", jsonString(got))
	}
	person.do("DELETE", "/v1/agents/agt_sub/rules/"+id, nil).wantProblem(t, "delete again", http.StatusNotFound, "NotFound", "")
	person.do("DELETE", "/v1/agents/agt_sub/rules/rul_01JC0000000000000000000000", nil).wantProblem(t, "delete missing rule", http.StatusNotFound, "NotFound", "")
}
