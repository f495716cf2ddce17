package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// registerUnder has parent ask for agents.spawn:*, has approver allow it
// once if it is pending, and registers the subagent with that request. It returns the subagent's id and token.
func registerUnder(t *testing.T, url string, parent, approver *client) (string, string) {
	t.Helper()
	rec := parent.submit(map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{}})
	if str(rec["status"]) == "pending" {
		rec = approver.answer(rec, "allow", "").want(t, "allow the spawn", http.StatusOK).body
	}
	if str(rec["status"]) != "approved" {
		t.Fatalf("spawn request: %s by %s, want approved", rec["status"], by(rec))
	}
	r := parent.do("POST", "/v1/agents", map[string]any{"request_id": rec["id"]}).want(t, "register", http.StatusCreated)
	return str(obj(r.body["agent"])["id"]), str(r.body["token"])
}

// spawner gives agt_programmer a lifetime allow grant for agents.spawn:*.
func spawner(t *testing.T, url string) *client {
	t.Helper()
	person, main, prog := newClient(t, url, aPerson), newClient(t, url, aMain), newClient(t, url, aProg)
	rec := prog.submit(map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "arguments": map[string]any{"k": "grant"}})
	rec = main.answer(rec, "abstain", "").want(t, "main abstains", http.StatusOK).body
	person.answer(rec, "allow", "lifetime").want(t, "person allows spawning for lifetime", http.StatusOK)
	return prog
}

// waitTypeAbout waits until ch has carried an event of type typ about each
// of ids, in any order.
func waitTypeAbout(t *testing.T, ch <-chan sseEvent, typ string, ids ...string) {
	t.Helper()
	missing := map[string]bool{}
	for _, id := range ids {
		missing[id] = true
	}
	timeout := time.After(10 * time.Second)
	for len(missing) > 0 {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the event stream ended; no %s event about %v", typ, missing)
			}
			for id := range missing {
				if ev.event == typ && strings.Contains(ev.data, id) {
					delete(missing, id)
				}
			}
		case <-timeout:
			t.Fatalf("no %s event about %v within 10s", typ, missing)
		}
	}
}

// TestRetireAgentRevokesTokensAndCancels is defect 9: DELETE
// /v1/agents/{id} retires a registered agent and its descendants; their
// tokens stop working at once and their pending requests are cancelled,
// each with its request.cancelled event.
func TestRetireAgentRevokesTokensAndCancels(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	prog := spawner(t, url)
	person := newClient(t, url, aPerson)
	aID, aTok := registerUnder(t, url, prog, prog)
	a := newClient(t, url, aTok)
	bID, bTok := registerUnder(t, url, a, prog)
	b := newClient(t, url, bTok)
	aReq, bReq := a.pending(), b.pending()
	ch, hr := openEvents(t, url, aPerson, "")
	if hr.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/events: %d", hr.StatusCode)
	}

	del := func(c *client, id string) resp { return c.do("DELETE", "/v1/agents/"+id, nil) }
	del(newClient(t, url, aSibling), aID).wantProblem(t, "another branch retires", http.StatusForbidden, "Forbidden", "")
	del(b, aID).wantProblem(t, "a descendant retires its parent", http.StatusForbidden, "Forbidden", "")
	del(a, aID).wantProblem(t, "an agent retires itself", http.StatusForbidden, "Forbidden", "")
	del(newClient(t, url, aPerson2), aID).wantProblem(t, "another member retires", http.StatusNotFound, "NotFound", "")
	del(newClient(t, url, aOther), aID).wantProblem(t, "another member's agent retires", http.StatusNotFound, "NotFound", "")
	del(person, "agt_01JC0000000000000000000000").wantProblem(t, "unknown agent", http.StatusNotFound, "NotFound", "")
	del(person, "agt_sub").wantProblem(t, "person retires a configured agent", http.StatusForbidden, "Forbidden", "")
	del(newClient(t, url, aAdmin), "agt_sub").wantProblem(t, "admin retires a configured agent", http.StatusForbidden, "Forbidden", "")
	if st := str(a.get(str(aReq["id"]))["status"]); st != "pending" {
		t.Fatalf("after refused retirements: %s, want pending", st)
	}

	r := del(prog, aID).want(t, "parent retires its subagent", http.StatusOK)
	if str(r.body["id"]) != aID || r.body["retired_at"] == nil {
		t.Errorf("retired agent = %s, want %s with retired_at", r.raw, aID)
	}
	if _, leaked := r.body["token_sha256"]; leaked {
		t.Errorf("the retired agent shows token_sha256: %s", r.raw)
	}
	for name, c := range map[string]*client{"retired agent": a, "its subagent": b} {
		c.do("GET", "/v1/requests/"+str(aReq["id"]), nil).wantProblem(t, name+" reads", http.StatusUnauthorized, "Unauthenticated", "")
		c.do("POST", "/v1/requests", map[string]any{"tool": "deploy", "arguments": map[string]any{}}).wantProblem(t, name+" submits", http.StatusUnauthorized, "Unauthenticated", "")
		c.do("POST", "/v1/agents", map[string]any{}).wantProblem(t, name+" registers", http.StatusUnauthorized, "Unauthenticated", "")
	}
	for req, agent := range map[string]string{str(aReq["id"]): aID, str(bReq["id"]): bID} {
		rec := person.get(req)
		if str(rec["status"]) != "cancelled" || by(rec) != "agent/"+agent {
			t.Errorf("%s of %s: %s by %s, want cancelled by agent/%s", req, agent, rec["status"], by(rec), agent)
		}
		if note := str(obj(rec["decision"])["note"]); !strings.Contains(note, "retired") {
			t.Errorf("%s: cancel note %q does not say the agent was retired", req, note)
		}
	}
	waitTypeAbout(t, ch, "dev.countersign.request.cancelled", str(aReq["id"]), str(bReq["id"]))
	if items, _, _ := newClient(t, url, aProg).list("?status=pending"); len(items) != 0 {
		t.Errorf("the parent's inbox still holds %s", jsonString(ids(items)))
	}
	// Work handed to a retired subagent is refused (SPEC §3: 400).
	prog.do("POST", "/v1/requests", map[string]any{"capability": map[string]any{"action": "agents.delegate", "target": aID}, "arguments": map[string]any{"task": "x"}}).
		wantProblem(t, "delegation to a retired subagent", http.StatusBadRequest, "InvalidRequest", "capability.target")
	del(person, aID).want(t, "retiring again", http.StatusOK)
	del(prog, bID).want(t, "retiring a retired descendant", http.StatusOK)
	// The parent itself goes on.
	registerUnder(t, url, prog, prog)
}

// TestRetireAgentByPersonAdminAndAncestor: the agent's person, admin and
// any agent above it may retire it; it is then 401 at once.
func TestRetireAgentByPersonAdminAndAncestor(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	prog := spawner(t, url)
	for _, tok := range []string{aPerson, aAdmin, aMain} {
		id, token := registerUnder(t, url, prog, prog)
		newClient(t, url, token).pending()
		newClient(t, url, tok).do("DELETE", "/v1/agents/"+id, nil).want(t, tok+" retires", http.StatusOK)
		newClient(t, url, token).do("GET", "/v1/requests", nil).wantProblem(t, "token after retirement by "+tok, http.StatusUnauthorized, "Unauthenticated", "")
	}
}

// TestRetireAgentEndsWhatItHolds: a retired agent's held long-poll answers
// 401 Unauthenticated (SPEC §10: a token that stops authenticating loses
// what it holds, not only its next call).
func TestRetireAgentEndsWhatItHolds(t *testing.T) {
	t.Parallel()
	url := startAuthority(t)
	prog := spawner(t, url)
	aID, aTok := registerUnder(t, url, prog, prog)
	req := newClient(t, url, aTok).pending()
	hr, err := http.NewRequest(http.MethodGet, url+"/v1/requests/"+str(req["id"])+"?wait=60s", nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+aTok)
	poll := servertest.HoldRequest(t, &http.Client{}, hr)
	time.Sleep(200 * time.Millisecond) // let the long-poll be held before the retirement
	prog.do("DELETE", "/v1/agents/"+aID, nil).want(t, "parent retires its subagent", http.StatusOK)
	select {
	case a := <-poll:
		if a.Err != nil || a.Status != http.StatusUnauthorized || !strings.Contains(a.Body, `"error":"Unauthenticated"`) {
			t.Errorf("the retired agent's long-poll answered %d %v %s, want 401 Unauthenticated", a.Status, a.Err, a.Body)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("the retired agent's long-poll is still held 3s after its retirement")
	}
}
