package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// SPEC §5 "Authority flows down": an agent may restrict its descendants,
// never loosen anything for itself or for an agent above it.

// Tokens of authorityYAML: u-1's tree is agt_main → agt_programmer →
// agt_sub, and agt_sibling under agt_main; agt_other works for u-2.
const (
	aPerson  = "a-person"   // person:u-1
	aPerson2 = "a-person2"  // person:u-2
	aAdmin   = "a-admin"    // service:ops, admin
	aMain    = "a-main"     // agent:agt_main
	aProg    = "a-prog"     // agent:agt_programmer
	aSub     = "a-sub"      // agent:agt_sub
	aSibling = "a-sibling"  // agent:agt_sibling
	aOther   = "a-other"    // agent:agt_other (u-2)
	aProgAdm = "a-prog-adm" // agent:agt_programmer with admin (created_by is the agent)
)

// selfApprovingRule is the rule the programmer tried to give itself.
const selfApprovingRule = "Any refund may be issued."

const authorityYAML = `tenants:
  - id: demo
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1}
      - {id: agt_programmer, member: u-1, parent: agt_main}
      - {id: agt_sub, member: u-1, parent: agt_programmer}
      - {id: agt_sibling, member: u-1, parent: agt_main}
      - {id: agt_other, member: u-2}
    tokens:
      - {token: a-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: a-person2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: a-admin, principal: "service:ops", scopes: [admin]}
      - {token: a-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: a-prog, principal: "agent:agt_programmer", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: a-sub, principal: "agent:agt_sub", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: a-sibling, principal: "agent:agt_sibling", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: a-other, principal: "agent:agt_other", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: a-prog-adm, principal: "agent:agt_programmer", scopes: [admin]}
    judge: {base_url: "%s/v1", model: scripted, timeout: 5s}
`

// startAuthority runs authorityYAML with a judge model that always allows
// by quoting selfApprovingRule (a real HTTP server speaking the
// chat-completions protocol). The judge's quote check is what stands
// between such a model and an approval: only a kept rule can be quoted.
func startAuthority(t *testing.T) string {
	t.Helper()
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		content, _ := json.Marshal(map[string]any{"verdict": "allow", "quote": selfApprovingRule,
			"evidence": []string{"payment_123"}, "rationale": "A rule allows it."})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": string(content)}}}})
	}))
	t.Cleanup(model.Close)
	return servertest.Start(t, servertest.WithConfig(fmt.Sprintf(authorityYAML, model.URL))).URL
}

// refund submits an issue_refund call.
func refund(c *client) map[string]any {
	c.t.Helper()
	return c.submit(map[string]any{"tool": "issue_refund", "arguments": map[string]any{"payment_id": "payment_123"}})
}

func rulesOf(t *testing.T, c *client, agent string) []map[string]any {
	t.Helper()
	return objects(c.do("GET", "/v1/agents/"+agent+"/rules", nil).want(t, "rules of "+agent, http.StatusOK).body["items"])
}

// addRule posts a rule; effect "" sends none.
func addRule(c *client, agent, text, effect string) resp {
	c.t.Helper()
	body := map[string]any{"text": text}
	if effect != "" {
		body["effect"] = effect
	}
	return c.do("POST", "/v1/agents/"+agent+"/rules", body)
}

// TestAgentCannotAddAllowRuleForItself: authority flows down (SPEC §5).
// Were an agent able to add an allow rule for itself, the judge could
// quote it and approve the agent's next refund by that rule.
func TestAgentCannotAddAllowRuleForItself(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	prog := newClient(t, url, aProg)
	addRule(prog, "agt_programmer", selfApprovingRule, "allow").wantProblem(t, "agent adds an allow rule for itself", http.StatusForbidden, "Forbidden", "")
	if got := rulesOf(t, newClient(t, url, aPerson), "agt_programmer"); len(got) != 0 {
		t.Fatalf("a refused rule was kept: %s", jsonString(got))
	}
	rec := refund(prog)
	if str(rec["status"]) != "pending" {
		t.Fatalf("the next refund: %s by %s, want pending (no rule of its own making may approve it)", rec["status"], by(rec))
	}
}

// TestAgentRulesFlowDown: who may add which rule for whom (SPEC §5).
func TestAgentRulesFlowDown(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	c := func(tok string) *client { return newClient(t, url, tok) }
	tests := []struct {
		name, token, agent, effect string
		want                       int
	}{
		{"self allow", aProg, "agt_programmer", "allow", 403},
		{"self deny", aProg, "agt_programmer", "deny", 403},
		{"self without effect", aProg, "agt_programmer", "", 403},
		{"parent allow", aSub, "agt_programmer", "allow", 403},
		{"parent deny", aSub, "agt_programmer", "deny", 403},
		{"grandparent allow", aSub, "agt_main", "allow", 403},
		{"grandparent without effect", aSub, "agt_main", "", 403},
		{"sibling deny", aSibling, "agt_programmer", "deny", 403},
		{"other branch deny", aSibling, "agt_sub", "deny", 403},
		{"child allow", aProg, "agt_sub", "allow", 403},
		{"child without effect (could allow)", aProg, "agt_sub", "", 403},
		{"child deny", aProg, "agt_sub", "deny", 201},
		{"grandchild deny", aMain, "agt_sub", "deny", 201},
		{"another member's agent", aProg, "agt_other", "deny", 404},
		{"person allow", aPerson, "agt_programmer", "allow", 201},
		{"person without effect", aPerson, "agt_main", "", 201},
		{"admin allow", aAdmin, "agt_sub", "allow", 201},
	}
	for _, tt := range tests {
		r := addRule(c(tt.token), tt.agent, "Rule for "+tt.name+".", tt.effect)
		switch tt.want {
		case 201:
			r.want(t, tt.name, http.StatusCreated)
		case 403:
			r.wantProblem(t, tt.name, http.StatusForbidden, "Forbidden", "")
		default:
			r.wantProblem(t, tt.name, tt.want, "NotFound", "")
		}
	}
	// Only the allowed ones were kept.
	for agent, want := range map[string]int{"agt_programmer": 1, "agt_main": 1, "agt_sub": 3, "agt_sibling": 0} {
		if got := rulesOf(t, c(aPerson), agent); len(got) != want {
			t.Errorf("rules of %s = %s, want %d", agent, jsonString(got), want)
		}
	}
}

// TestAgentCannotDeleteItsPersonsDenyRule is defect 2 (rules): an agent
// deleted the deny rule its person had kept for it. An agent may delete
// only the deny rules it added itself, for its descendants.
func TestAgentCannotDeleteItsPersonsDenyRule(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	person, admin, main, prog, sub := newClient(t, url, aPerson), newClient(t, url, aAdmin), newClient(t, url, aMain), newClient(t, url, aProg), newClient(t, url, aSub)
	ruleID := func(c *client, agent, effect string) string {
		return str(addRule(c, agent, "A rule by "+c.token+" "+effect+".", effect).want(t, "add rule", http.StatusCreated).body["id"])
	}
	del := func(c *client, agent, id string) resp { return c.do("DELETE", "/v1/agents/"+agent+"/rules/"+id, nil) }

	personsDeny := ruleID(person, "agt_programmer", "deny")
	del(prog, "agt_programmer", personsDeny).wantProblem(t, "agent deletes its person's deny rule on itself", http.StatusForbidden, "Forbidden", "")
	del(main, "agt_programmer", personsDeny).wantProblem(t, "ancestor deletes the person's deny rule", http.StatusForbidden, "Forbidden", "")

	progsDeny := ruleID(prog, "agt_sub", "deny")
	mainsDeny := ruleID(main, "agt_sub", "deny")
	personsAllow := ruleID(person, "agt_sub", "allow")
	// A rule without effect that agt_programmer added under admin (or
	// before agents were held to deny rules) may deny: deleting it loosens.
	progsPlain := ruleID(newClient(t, url, aProgAdm), "agt_sub", "")
	del(prog, "agt_sub", progsPlain).wantProblem(t, "agent deletes a rule without effect it added", http.StatusForbidden, "Forbidden", "")
	del(sub, "agt_sub", progsDeny).wantProblem(t, "agent deletes its parent's deny rule on itself", http.StatusForbidden, "Forbidden", "")
	del(prog, "agt_sub", mainsDeny).wantProblem(t, "agent deletes a deny rule its parent added", http.StatusForbidden, "Forbidden", "")
	del(prog, "agt_sub", personsAllow).wantProblem(t, "agent deletes a rule it did not add", http.StatusForbidden, "Forbidden", "")
	del(prog, "agt_sub", progsDeny).want(t, "agent deletes the deny rule it added", http.StatusNoContent)

	del(person, "agt_programmer", personsDeny).want(t, "person deletes a deny rule", http.StatusNoContent)
	del(admin, "agt_sub", mainsDeny).want(t, "admin deletes a deny rule", http.StatusNoContent)
	del(person, "agt_sub", progsPlain).want(t, "person deletes a rule without effect", http.StatusNoContent)
	if got := rulesOf(t, person, "agt_sub"); len(got) != 1 || str(got[0]["id"]) != personsAllow {
		t.Errorf("agt_sub rules = %s, want only the person's allow rule", jsonString(got))
	}
}

// TestAgentAnswerRuleKeptOnlyAsDeny: a rule given with an agent's answer is
// kept with effect deny, whatever the answer; a person's is kept as given.
func TestAgentAnswerRuleKeptOnlyAsDeny(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	person, main, prog := newClient(t, url, aPerson), newClient(t, url, aMain), newClient(t, url, aProg)

	rec := prog.pending()
	main.answer(rec, "allow", "", "rule", selfApprovingRule).want(t, "main endorses with a rule", http.StatusOK)
	rec = prog.pending("arguments", map[string]any{"n": 2})
	main.answer(rec, "deny", "", "rule", "No deploys on Fridays.").want(t, "main denies with a rule", http.StatusOK)
	rec = prog.pending("arguments", map[string]any{"n": 3})
	main.answer(rec, "abstain", "").want(t, "main abstains", http.StatusOK)
	rec = prog.get(str(rec["id"]))
	person.answer(rec, "deny", "", "rule", "Deploys need a ticket.").want(t, "person denies with a rule", http.StatusOK)

	want := map[string]string{selfApprovingRule: "deny", "No deploys on Fridays.": "deny", "Deploys need a ticket.": ""}
	got := rulesOf(t, person, "agt_programmer")
	if len(got) != len(want) {
		t.Fatalf("rules = %s, want %d", jsonString(got), len(want))
	}
	for _, r := range got {
		if e, ok := want[str(r["text"])]; !ok || str(r["effect"]) != e {
			t.Errorf("rule %q kept with effect %q, want %q", r["text"], r["effect"], e)
		}
	}
	// The endorser's rule cannot approve: the judge quotes it, and it is a deny rule.
	if rec := refund(prog); str(rec["status"]) == "approved" {
		t.Errorf("a refund was approved by %s after an agent's answer rule", by(rec))
	}
}

// grantFor returns the one grant of agent with effect.
func grantFor(t *testing.T, person *client, agent, effect string) string {
	t.Helper()
	gs := grantsOf(t, person, "?agent="+agent+"&effect="+effect)
	if len(gs) != 1 {
		t.Fatalf("%s grants of %s = %s, want one", effect, agent, jsonString(gs))
	}
	return str(gs[0]["id"])
}

// TestAgentCannotRevokeOwnDenyGrant is defect 2 (grants): an agent revoked
// the lifetime deny grant its person had left it. Revoking a deny grant
// loosens, and takes the person or admin.
func TestAgentCannotRevokeOwnDenyGrant(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	person, main, prog := newClient(t, url, aPerson), newClient(t, url, aMain), newClient(t, url, aProg)
	rec := prog.pending()
	rec = main.answer(rec, "abstain", "").want(t, "main abstains", http.StatusOK).body
	person.answer(rec, "deny", "lifetime").want(t, "person denies for lifetime", http.StatusOK)
	deny := grantFor(t, person, "agt_programmer", "deny")

	prog.do("DELETE", "/v1/grants/"+deny, nil).wantProblem(t, "agent revokes its own deny grant", http.StatusForbidden, "Forbidden", "")
	main.do("DELETE", "/v1/grants/"+deny, nil).wantProblem(t, "parent revokes its child's deny grant", http.StatusForbidden, "Forbidden", "")
	newClient(t, url, aOther).do("DELETE", "/v1/grants/"+deny, nil).wantProblem(t, "another member's agent", http.StatusNotFound, "GrantNotFound", "")
	if st := str(prog.submit(map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}})["status"]); st != "denied" {
		t.Fatalf("after refused revocations: %s, want denied by the deny grant", st)
	}
	person.do("DELETE", "/v1/grants/"+deny, nil).want(t, "person revokes the deny grant", http.StatusOK)
}

// TestAgentRevokesOnlyDescendantsAllowGrants: an agent may revoke allow
// grants of its descendants, never its own or an ancestor's or another
// branch's; the person and admin may revoke any.
func TestAgentRevokesOnlyDescendantsAllowGrants(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	person, main, prog, sub := newClient(t, url, aPerson), newClient(t, url, aMain), newClient(t, url, aProg), newClient(t, url, aSub)
	// agt_sub asks; agt_programmer and agt_main endorse; the person allows
	// for lifetime: all three get an allow grant.
	rec := sub.pending()
	rec = prog.answer(rec, "allow", "").want(t, "programmer endorses", http.StatusOK).body
	rec = main.answer(rec, "allow", "").want(t, "main endorses", http.StatusOK).body
	person.answer(rec, "allow", "lifetime").want(t, "person allows for lifetime", http.StatusOK)
	subG, progG, mainG := grantFor(t, person, "agt_sub", "allow"), grantFor(t, person, "agt_programmer", "allow"), grantFor(t, person, "agt_main", "allow")
	revoke := func(c *client, id string) resp { return c.do("DELETE", "/v1/grants/"+id, nil) }

	revoke(sub, subG).wantProblem(t, "agent revokes its own allow grant", http.StatusForbidden, "Forbidden", "")
	revoke(sub, progG).wantProblem(t, "agent revokes its parent's grant", http.StatusForbidden, "Forbidden", "")
	revoke(sub, mainG).wantProblem(t, "agent revokes its grandparent's grant", http.StatusForbidden, "Forbidden", "")
	revoke(newClient(t, url, aSibling), subG).wantProblem(t, "agent revokes another branch's grant", http.StatusForbidden, "Forbidden", "")
	revoke(prog, subG).want(t, "agent revokes its child's allow grant", http.StatusOK)
	revoke(main, progG).want(t, "agent revokes its child's allow grant", http.StatusOK)
	revoke(person, mainG).want(t, "person revokes", http.StatusOK)
	if st := str(sub.submit(map[string]any{"tool": "deploy", "arguments": map[string]any{"n": 1}})["status"]); st != "pending" {
		t.Errorf("after revocation: %s, want pending", st)
	}
}

// TestRegisteredSubagentGetsNothingFromItsParent: registering a subagent
// copies none of its parent's grants or rules (SPEC §5).
func TestRegisteredSubagentGetsNothingFromItsParent(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	person, main, prog := newClient(t, url, aPerson), newClient(t, url, aMain), newClient(t, url, aProg)
	// agt_programmer holds lifetime allow grants for refunds and spawning,
	// and an allow rule the judge quotes.
	for _, body := range []map[string]any{
		{"tool": "issue_refund", "arguments": map[string]any{"payment_id": "payment_0"}},
		{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{}},
	} {
		rec := prog.submit(body)
		rec = main.answer(rec, "abstain", "").want(t, "main abstains", http.StatusOK).body
		person.answer(rec, "allow", "lifetime").want(t, "person allows for lifetime", http.StatusOK)
	}
	addRule(person, "agt_programmer", selfApprovingRule, "allow").want(t, "person adds an allow rule", http.StatusCreated)
	if rec := refund(prog); str(rec["status"]) != "approved" {
		t.Fatalf("the parent's own refund: %s, want approved", rec["status"])
	}

	r := prog.do("POST", "/v1/agents", map[string]any{"role": "helper"}).want(t, "register", http.StatusCreated)
	id, token := str(obj(r.body["agent"])["id"]), str(r.body["token"])
	if gs := grantsOf(t, person, "?agent="+id); len(gs) != 0 {
		t.Errorf("the new subagent has grants %s, want none", jsonString(gs))
	}
	if rs := rulesOf(t, person, id); len(rs) != 0 {
		t.Errorf("the new subagent has rules %s, want none", jsonString(rs))
	}
	child := newClient(t, url, token)
	if rec := refund(child); str(rec["status"]) != "pending" {
		t.Errorf("the subagent's refund: %s by %s, want pending (its parent's grants are not its own)", rec["status"], by(rec))
	}
	if r := child.do("POST", "/v1/agents", map[string]any{}); r.status != http.StatusForbidden {
		t.Errorf("the subagent registers under its parent's spawn grant: %d, want 403", r.status)
	}
}

// A subagent's token has no scope its parent's token lacks: an agent that
// may only submit cannot register a subagent that answers or revokes.
func TestRegisteredSubagentHasNoScopeItsParentLacks(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person, noread := newClient(t, url, tokMain), newClient(t, url, tokPerson), newClient(t, url, tokNoRead)
	spawn := main.submit(map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{}})
	person.answer(spawn, "allow", "lifetime").want(t, "person allows spawning for good", http.StatusOK)
	r := noread.do("POST", "/v1/agents", map[string]any{"role": "helper"}).want(t, "register with requests:write only", http.StatusCreated)
	child := newClient(t, url, str(r.body["token"]))
	if got := child.do("GET", "/v1/requests", nil); got.status != http.StatusForbidden {
		t.Errorf("the subagent reads an inbox: %d, want 403 (its parent's token has no approvals:read)", got.status)
	}
	if got := child.do("GET", "/v1/grants", nil); got.status != http.StatusForbidden {
		t.Errorf("the subagent lists grants: %d, want 403", got.status)
	}
	if rec := child.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{"path": "a"}}); rec["id"] == nil {
		t.Errorf("the subagent cannot submit: %v", rec)
	}
	full := newClient(t, url, str(main.do("POST", "/v1/agents", map[string]any{}).want(t, "register with every agent scope", http.StatusCreated).body["token"]))
	full.do("GET", "/v1/requests", nil).want(t, "a subagent of a full token reads its inbox", http.StatusOK)
}
