package httpapi_test

import (
	"net/http"
	"testing"
	"time"
)

// TestAPIAnswerRules: the answer rules of SPEC §5 in order: 400 for bad
// input (before 404), 404 when not visible, a safe repeat 200 unchanged
// (whatever expected says), 409 RequestConflict for not the approver, a
// stale expected, or a terminal request.
func TestAPIAnswerRules(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	sub, prog, main, person := newClient(t, url, tokSub), newClient(t, url, tokProg), newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.pending() // approver person u-1
	path := "/v1/requests/" + str(rec["id"])
	for _, tc := range []struct {
		name  string
		c     *client
		body  string
		code  int
		err   string
		field string
	}{
		{"missing expected", person, `{"decision":"allow"}`, 400, "InvalidRequest", "expected"},
		{"missing decision", person, `{"expected":0}`, 400, "InvalidRequest", "decision"},
		{"empty body", person, `{}`, 400, "InvalidRequest", ""},
		{"unknown decision", person, `{"expected":0,"decision":"approve"}`, 400, "InvalidRequest", "decision"},
		{"unknown scope", person, `{"expected":0,"decision":"allow","scope":"forever"}`, 400, "InvalidRequest", "scope"},
		{"person abstains", person, `{"expected":0,"decision":"abstain"}`, 400, "InvalidRequest", "decision"},
		{"bad input before not visible", newClient(t, url, tokPerson2), `{"decision":"allow"}`, 400, "InvalidRequest", "expected"},
		{"not visible: another member", newClient(t, url, tokPerson2), `{"expected":0,"decision":"allow"}`, 404, "RequestNotFound", ""},
		{"not visible: agent outside the chain", prog, `{"expected":0,"decision":"allow"}`, 404, "RequestNotFound", ""},
		{"not visible: another tenant", newClient(t, url, tokXPerson), `{"expected":0,"decision":"deny"}`, 404, "RequestNotFound", ""},
		{"own request: not the approver", main, `{"expected":0,"decision":"allow"}`, 409, "RequestConflict", ""},
		{"stale expected", person, `{"expected":3,"decision":"allow"}`, 409, "RequestConflict", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.do("POST", path, tc.body).wantProblem(t, tc.name, tc.code, tc.err, tc.field)
		})
	}
	if got := person.get(str(rec["id"])); num(got["revision"]) != 0 || str(got["status"]) != "pending" {
		t.Fatalf("refused answers changed the request: %v", got)
	}

	done := person.do("POST", path, `{"expected":0,"decision":"allow","scope":"once","reason":"ok"}`).want(t, "allow", http.StatusOK).body
	if str(done["status"]) != "approved" || by(done) != "person/u-1" || num(done["revision"]) != 1 {
		t.Fatalf("after allow: status %v by %s revision %v; want approved person/u-1 1", done["status"], by(done), done["revision"])
	}
	d := obj(done["decision"])
	if str(d["note"]) != "ok" || str(d["scope"]) != "once" {
		t.Errorf("decision note %q scope %q, want ok, once", d["note"], d["scope"])
	}
	if got := ts(t, "expires_at", d["expires_at"]).Sub(ts(t, "decided_at", d["decided_at"])); got != 5*time.Minute {
		t.Errorf("expires_at - decided_at = %v, want approval_ttl 5m", got)
	}
	if got := jsonString(done["approver"]); got != `{"id":"u-1","kind":"person"}` {
		t.Errorf("approver after the decision = %s, want the last decider", got)
	}
	for _, tc := range []struct {
		name, body string
		code       int
	}{
		{"safe repeat", `{"expected":0,"decision":"allow"}`, 200},
		{"safe repeat, any expected", `{"expected":42,"decision":"allow","scope":"once"}`, 200},
		{"opposite decision", `{"expected":1,"decision":"deny"}`, 409},
		{"same decision, other scope", `{"expected":1,"decision":"allow","scope":"lifetime"}`, 409},
	} {
		r := person.do("POST", path, tc.body)
		if tc.code == 200 {
			r.want(t, tc.name, 200)
			if num(r.body["revision"]) != 1 || str(r.body["status"]) != "approved" || jsonString(r.body["decision"]) != jsonString(done["decision"]) {
				t.Errorf("%s changed the record: %s", tc.name, r.raw)
			}
			continue
		}
		r.wantProblem(t, tc.name, tc.code, "RequestConflict", "")
	}
	// Terminal: another (visible) caller's answer is 409.
	newClient(t, url, tokAdmin).do("POST", path, `{"expected":1,"decision":"deny"}`).wantProblem(t, "terminal, admin", 409, "RequestConflict", "")
	if got := person.get(str(rec["id"])); num(got["revision"]) != 1 {
		t.Errorf("revision %v after refused answers, want 1", got["revision"])
	}

	// Not the current approver: agt_main is in the chain of agt_sub's
	// request but agt_programmer must answer first.
	sr := sub.pending()
	main.answer(sr, "allow", "").wantProblem(t, "chain agent that is not the approver", 409, "RequestConflict", "")
	person.answer(sr, "allow", "").wantProblem(t, "member that is not the approver yet", 409, "RequestConflict", "")
	sub.answer(sr, "allow", "").wantProblem(t, "requester answers its own request", 409, "RequestConflict", "")
}

// TestAPIAnswerChain: sub → programmer → main → person with an
// endorsement and an abstention, then the grants of a session approval
// (SPEC §3).
func TestAPIAnswerChain(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	sub, prog, main, person := newClient(t, url, tokSub), newClient(t, url, tokProg), newClient(t, url, tokMain), newClient(t, url, tokPerson)
	args := map[string]any{"payment_id": "p-1", "amount": 4900}
	rec := sub.submit(map[string]any{"tool": "issue_refund", "arguments": args, "session": "ses-1"})
	id := str(rec["id"])
	if jsonString(rec["approver"]) != `{"id":"agt_programmer","kind":"agent"}` || num(rec["revision"]) != 0 {
		t.Fatalf("new request: approver %v revision %v", rec["approver"], rec["revision"])
	}

	// programmer does not hold issue_refund: its allow is an endorsement.
	rec = prog.answer(rec, "allow", "lifetime", "reason", "looks right").want(t, "programmer allows", http.StatusOK).body
	if str(rec["status"]) != "pending" || num(rec["revision"]) != 1 || jsonString(rec["approver"]) != `{"id":"agt_main","kind":"agent"}` {
		t.Fatalf("after endorsement: status %v revision %v approver %v; want pending 1 agt_main", rec["status"], rec["revision"], rec["approver"])
	}
	ends := objects(rec["endorsements"])
	if len(ends) != 1 || str(ends[0]["agent"]) != "agt_programmer" || str(ends[0]["note"]) != "looks right" {
		t.Fatalf("endorsements = %s, want [{agt_programmer, looks right, at}]", jsonString(rec["endorsements"]))
	}
	ts(t, "endorsement at", ends[0]["at"])
	// Its repeat is safe.
	prog.do("POST", "/v1/requests/"+id, map[string]any{"expected": 0, "decision": "allow"}).want(t, "repeat endorsement", http.StatusOK)

	// main abstains: passes up without endorsing.
	rec = main.answer(rec, "abstain", "").want(t, "main abstains", http.StatusOK).body
	if str(rec["status"]) != "pending" || num(rec["revision"]) != 2 || jsonString(rec["approver"]) != `{"id":"u-1","kind":"person"}` {
		t.Fatalf("after abstention: status %v revision %v approver %v; want pending 2 person u-1", rec["status"], rec["revision"], rec["approver"])
	}
	if n := len(objects(rec["endorsements"])); n != 1 {
		t.Errorf("abstention changed endorsements to %s", jsonString(rec["endorsements"]))
	}
	main.do("POST", "/v1/requests/"+id, map[string]any{"expected": 1, "decision": "abstain"}).want(t, "repeat abstention", http.StatusOK)
	if items, _, _ := main.list(""); !contains(ids(items), id) {
		t.Errorf("the abstained request is not in agt_main's inbox")
	}

	rec = person.answer(rec, "allow", "session").want(t, "person allows for the session", http.StatusOK).body
	if str(rec["status"]) != "approved" || by(rec) != "person/u-1" || num(rec["revision"]) != 3 {
		t.Fatalf("after person: status %v by %s revision %v", rec["status"], by(rec), rec["revision"])
	}
	if str(obj(rec["decision"])["scope"]) != "session" {
		t.Errorf("decision scope %v, want session", obj(rec["decision"])["scope"])
	}

	// Grants: the requester and the endorser, not the abstainer; in force
	// before the answer returned.
	items := grantsOf(t, person, "?scope=session")
	got := map[string]map[string]any{}
	for _, g := range items {
		got[str(g["agent"])] = g
	}
	if len(items) != 2 || got["agt_sub"] == nil || got["agt_programmer"] == nil {
		t.Fatalf("grants = %s, want one each for agt_sub and agt_programmer", jsonString(items))
	}
	for agent, g := range got {
		if !grantIDPattern.MatchString(str(g["id"])) || str(g["effect"]) != "allow" || str(g["scope"]) != "session" ||
			str(g["session"]) != "ses-1" || str(g["request_id"]) != id || jsonString(g["created_by"]) != `{"id":"u-1","kind":"person"}` ||
			jsonString(g["capability"]) != `{"action":"tools.call","target":"issue_refund"}` || g["revoked_at"] != nil {
			t.Errorf("grant of %s = %s", agent, jsonString(g))
		}
		ts(t, "grant created_at", g["created_at"])
	}

	next := sub.submit(map[string]any{"tool": "issue_refund", "arguments": map[string]any{"payment_id": "p-2"}, "session": "ses-1"})
	if str(next["status"]) != "approved" || by(next) != "grant/"+str(got["agt_sub"]["id"]) {
		t.Errorf("next submit in ses-1: status %v by %s, want approved by grant/%s", next["status"], by(next), got["agt_sub"]["id"])
	}
	checkAutoDecision(t, next, "approved", by(next), 5*time.Minute)
	if s := str(sub.submit(map[string]any{"tool": "issue_refund", "arguments": args, "session": "ses-2"})["status"]); s != "pending" {
		t.Errorf("submit in another session: %q, want pending", s)
	}
	if s := str(sub.submit(map[string]any{"tool": "issue_refund", "arguments": args})["status"]); s != "pending" {
		t.Errorf("submit without a session: %q, want pending", s)
	}
	if s := str(prog.submit(map[string]any{"tool": "issue_refund", "arguments": args, "session": "ses-1"})["status"]); s != "approved" {
		t.Errorf("the endorser's own submit in ses-1: %q, want approved by its grant", s)
	}
	if s := str(main.submit(map[string]any{"tool": "issue_refund", "arguments": args, "session": "ses-1"})["status"]); s != "pending" {
		t.Errorf("the abstainer's submit in ses-1: %q, want pending (no grant)", s)
	}

	// agt_programmer holds through a session grant: lifetime is too large.
	newClient(t, url, tokPerson).do("DELETE", "/v1/grants/"+str(got["agt_sub"]["id"]), nil).want(t, "revoke sub's grant", http.StatusOK)
	again := sub.submit(map[string]any{"tool": "issue_refund", "arguments": args, "session": "ses-1"})
	if str(again["status"]) != "pending" {
		t.Fatalf("after revoking: %v, want pending", again["status"])
	}
	prog.answer(again, "allow", "lifetime").wantProblem(t, "holder by session grant allows for lifetime", 400, "InvalidRequest", "scope")
	if got := num(prog.get(str(again["id"]))["revision"]); got != 0 {
		t.Errorf("refused scope changed revision to %d", got)
	}
	done := prog.answer(again, "allow", "session").want(t, "holder allows for the session", http.StatusOK).body
	if str(done["status"]) != "approved" || by(done) != "agent/agt_programmer" {
		t.Errorf("holder's allow: status %v by %s, want approved by agent/agt_programmer", done["status"], by(done))
	}
}

// grantsOf lists grants and fails unless 200.
func grantsOf(t *testing.T, c *client, query string) []map[string]any {
	t.Helper()
	r := c.do("GET", "/v1/grants"+query, nil).want(t, "grants "+query, http.StatusOK)
	return objects(r.body["items"])
}

// TestAPIAnswerDenyScopes: deny is final from any decider; deny with scope
// lifetime leaves a deny grant for the requester only; once leaves none;
// session without a session leaves none (SPEC §3).
func TestAPIAnswerDenyScopes(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	sub, prog, person := newClient(t, url, tokSub), newClient(t, url, tokProg), newClient(t, url, tokPerson)

	// An endorsed request denied for lifetime: only the requester gets it.
	rec := sub.submit(map[string]any{"tool": "wipe_disk", "arguments": map[string]any{}})
	rec = prog.answer(rec, "allow", "").want(t, "endorse", http.StatusOK).body
	rec = newClient(t, url, tokMain).answer(rec, "deny", "lifetime", "reason", "no").want(t, "main denies", http.StatusOK).body
	if str(rec["status"]) != "denied" || by(rec) != "agent/agt_main" || str(obj(rec["decision"])["note"]) != "no" {
		t.Fatalf("after deny: %v by %s", rec["status"], by(rec))
	}
	if _, has := obj(rec["decision"])["expires_at"]; has && obj(rec["decision"])["expires_at"] != nil {
		t.Errorf("a denial has expires_at")
	}
	gs := grantsOf(t, person, "?effect=deny")
	if len(gs) != 1 || str(gs[0]["agent"]) != "agt_sub" || str(gs[0]["scope"]) != "lifetime" || str(gs[0]["effect"]) != "deny" ||
		jsonString(gs[0]["created_by"]) != `{"id":"agt_main","kind":"agent"}` {
		t.Fatalf("deny grants = %s, want one lifetime deny for agt_sub by agt_main", jsonString(gs))
	}
	next := sub.submit(map[string]any{"tool": "wipe_disk", "arguments": map[string]any{"again": true}, "session": "any"})
	if str(next["status"]) != "denied" || by(next) != "grant/"+str(gs[0]["id"]) {
		t.Errorf("next submit: %v by %s, want denied by the deny grant", next["status"], by(next))
	}
	checkAutoDecision(t, next, "denied", by(next), 0)

	// once and session-without-session leave no grant.
	for _, scope := range []string{"once", "session"} {
		r := sub.submit(map[string]any{"tool": "tool_" + scope, "arguments": map[string]any{}})
		prog.answer(r, "allow", "").want(t, "endorse", http.StatusOK)
		r = newClient(t, url, tokMain).get(str(r["id"]))
		newClient(t, url, tokMain).answer(r, "abstain", "").want(t, "abstain", http.StatusOK)
		r = person.get(str(r["id"]))
		person.answer(r, "allow", scope).want(t, "allow "+scope, http.StatusOK)
	}
	if gs := grantsOf(t, person, "?effect=allow"); len(gs) != 0 {
		t.Errorf("once / session-without-session answers left grants: %s", jsonString(gs))
	}
}

// TestAPIAnswerRuleField: the rule field of an answer keeps a rule for the
// requesting agent (SPEC §5).
func TestAPIAnswerRuleField(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.pending()
	text := "Deploys to staging on weekdays may be run."
	person.answer(rec, "allow", "once", "rule", text).want(t, "allow with a rule", http.StatusOK)
	r := person.do("GET", "/v1/agents/agt_main/rules", nil).want(t, "rules", http.StatusOK)
	found := false
	for _, rule := range objects(r.body["items"]) {
		if str(rule["text"]) == text {
			found = true
			if !ruleIDPattern.MatchString(str(rule["id"])) || str(rule["agent"]) != "agt_main" {
				t.Errorf("kept rule = %s", jsonString(rule))
			}
		}
	}
	if !found {
		t.Errorf("the answer's rule was not kept for agt_main: %s", r.raw)
	}
}

// TestAPIAnswerHolds: an agent holds a capability when its policy allows,
// none of its deny grants match, and it has an allow grant or the
// capability is a read (SPEC §3). Its allow then decides; otherwise it
// endorses.
func TestAPIAnswerHolds(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	sub, prog, main, person := newClient(t, url, tokSub), newClient(t, url, tokProg), newClient(t, url, tokMain), newClient(t, url, tokPerson)
	x := func(c *client, session string) map[string]any {
		body := map[string]any{"tool": "rotate_keys", "arguments": map[string]any{}}
		if session != "" {
			body["session"] = session
		}
		return c.submit(body)
	}

	// A read holds: on an unknown subject kind the read reaches agt_programmer, whose allow decides.
	rd := sub.submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}, "subject": map[string]any{"kind": "browser"}})
	rd = prog.answer(rd, "allow", "once").want(t, "programmer allows a read", http.StatusOK).body
	if str(rd["status"]) != "approved" || by(rd) != "agent/agt_programmer" {
		t.Errorf("read answered by its holder: %v by %s, want approved by agent/agt_programmer", rd["status"], by(rd))
	}

	// sub and programmer get session allow grants for s1.
	r := x(sub, "s1")
	r = prog.answer(r, "allow", "").want(t, "endorse", http.StatusOK).body
	r = main.answer(r, "abstain", "").want(t, "abstain", http.StatusOK).body
	person.answer(r, "allow", "session").want(t, "allow for s1", http.StatusOK)
	// programmer gets a lifetime deny grant.
	pr := x(prog, "")
	if str(pr["status"]) != "pending" {
		t.Fatalf("programmer's request without a session: %v, want pending", pr["status"])
	}
	main.answer(pr, "deny", "lifetime").want(t, "main denies programmer for lifetime", http.StatusOK)
	var subGrant string
	for _, g := range grantsOf(t, person, "?agent=agt_sub") {
		subGrant = str(g["id"])
	}
	person.do("DELETE", "/v1/grants/"+subGrant, nil).want(t, "revoke sub's grant", http.StatusOK)

	// Now programmer has an allow (session s1) and a deny: it does not hold.
	r = x(sub, "s1")
	if str(r["status"]) != "pending" {
		t.Fatalf("sub after revoking: %v, want pending", r["status"])
	}
	r = prog.answer(r, "allow", "session").want(t, "programmer allows while denied", http.StatusOK).body
	if str(r["status"]) != "pending" || jsonString(r["approver"]) != `{"id":"agt_main","kind":"agent"}` || len(objects(r["endorsements"])) != 1 {
		t.Errorf("allow by an agent with a matching deny grant: status %v approver %v endorsements %v; want an endorsement passed to agt_main",
			r["status"], r["approver"], r["endorsements"])
	}
}
