package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// Approve with edits (SPEC §5): a person's allow with arguments binds the
// edited call only.

// refund submits a pending refund of amount by c.
func (c *client) refund(amount int) map[string]any {
	c.t.Helper()
	return c.pending("tool", "deploy", "arguments", map[string]any{"payment_id": "payment_123", "amount": amount, "currency": "GBP"})
}

func TestAPIApproveWithEdits(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.refund(4900)
	id, original := str(rec["id"]), str(rec["call_digest"])
	edited := map[string]any{"payment_id": "payment_123", "amount": 1000, "currency": "GBP"}

	done := person.answer(rec, "allow", "once", "arguments", edited, "reason", "half of it").want(t, "allow with edits", http.StatusOK).body
	want := wantDigest(t, "acme", "agt_main", "", "", "", "tools.call", "deploy", edited)
	if str(done["status"]) != "approved" || jsonString(done["arguments"]) != jsonString(edited) || str(done["call_digest"]) != want {
		t.Fatalf("after the edit: status %v arguments %s digest %v; want approved, %s, %s", done["status"], jsonString(done["arguments"]), done["call_digest"], jsonString(edited), want)
	}
	e := obj(done["edited"])
	if jsonString(e["by"]) != `{"id":"u-1","kind":"person"}` || str(e["original_digest"]) != original || str(e["at"]) == "" {
		t.Errorf("edited = %s, want by person u-1, original_digest %s, at", jsonString(e), original)
	}
	if grants := grantsOf(t, person, ""); len(grants) != 0 {
		t.Errorf("an approval with edits left grants: %s", jsonString(grants))
	}
	claim := func(digest string) resp {
		return main.do("POST", "/v1/requests/"+id+"/claim", map[string]any{"call_digest": digest})
	}
	old := claim(original)
	old.wantProblem(t, "claim with the original digest", http.StatusConflict, "RequestConflict", "")
	if str(old.body["reason"]) != "digest_mismatch" {
		t.Errorf("claim with the original digest: reason %v, want digest_mismatch", old.body["reason"])
	}
	if got := claim(want).want(t, "claim with the edited digest", http.StatusOK).body; str(got["claimed_at"]) == "" {
		t.Errorf("claimed record without claimed_at: %s", jsonString(got))
	}
}

// TestAPIEditRefusals: an edit by an agent, with a scope other than once,
// with a deny, or with arguments a submit would refuse is 400 and changes
// nothing.
func TestAPIEditRefusals(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, prog, person := newClient(t, url, tokMain), newClient(t, url, tokProg), newClient(t, url, tokPerson)
	rec := main.refund(4900)
	// agt_main holds deploy (a lifetime grant), so its allow would decide
	// agt_programmer's request: an edit is still not an agent's to make.
	person.answer(main.refund(1), "allow", "lifetime").want(t, "grant deploy to agt_main", http.StatusOK)
	byAgent := prog.refund(4900) // its approver is agt_main
	shell := main.bash("ls", "s1")
	path := "/v1/requests/" + str(rec["id"])
	for _, tc := range []struct {
		name  string
		c     *client
		path  string
		body  string
		field string
	}{
		{"scope session", person, path, `{"expected":0,"decision":"allow","scope":"session","arguments":{"amount":1}}`, "scope"},
		{"scope lifetime", person, path, `{"expected":0,"decision":"allow","scope":"lifetime","arguments":{"amount":1}}`, "scope"},
		{"deny with arguments", person, path, `{"expected":0,"decision":"deny","arguments":{"amount":1}}`, "arguments"},
		{"arguments not an object", person, path, `{"expected":0,"decision":"allow","arguments":[1]}`, "arguments"},
		{"arguments a string", person, path, `{"expected":0,"decision":"allow","arguments":"{}"}`, "arguments"},
		{"arguments null", person, path, `{"expected":0,"decision":"allow","arguments":null}`, "arguments"},
		{"duplicate key", person, path, `{"expected":0,"decision":"allow","arguments":{"amount":1,"amount":2}}`, "body"},
		{"lone surrogate", person, path, `{"expected":0,"decision":"allow","arguments":{"note":"\ud800"}}`, "body"},
		{"an agent edits", main, "/v1/requests/" + str(byAgent["id"]), `{"expected":0,"decision":"allow","arguments":{"amount":1}}`, "arguments"},
		{"shell edit without a command", person, "/v1/requests/" + str(shell["id"]), `{"expected":0,"decision":"allow","arguments":{"cmd":"ls"}}`, "arguments.command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.do("POST", tc.path, tc.body).wantProblem(t, tc.name, http.StatusBadRequest, "InvalidRequest", tc.field)
		})
	}
	for _, r := range []map[string]any{rec, byAgent, shell} {
		got := main.get(str(r["id"]))
		if str(got["status"]) != "pending" || num(got["revision"]) != 0 || jsonString(got["arguments"]) != jsonString(r["arguments"]) ||
			str(got["call_digest"]) != str(r["call_digest"]) || got["edited"] != nil {
			t.Errorf("a refused edit changed %s: %s", str(r["id"]), jsonString(got))
		}
	}
}

// An edit of a shell request is split into stages again, and the person's
// allow covers all of them.
func TestAPIEditShellSplitsStagesAgain(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	rec := main.bash("rm -rf /tmp/x && ls", "s1")
	done := person.answer(rec, "allow", "", "arguments", map[string]any{"command": "ls /tmp && echo ok"}).want(t, "edit the shell call", http.StatusOK).body
	st := stagesOf(done)
	if str(done["status"]) != "approved" || len(st) != 2 || !strings.HasPrefix(str(st[0]["text"]), "ls") {
		t.Fatalf("after the edit: %s, want approved with the edited command's two stages", jsonString(done))
	}
	for i, s := range st {
		if jsonString(s["allowed_by"]) != `{"id":"u-1","kind":"person"}` {
			t.Errorf("stage %d allowed_by %s, want person u-1", i, jsonString(s["allowed_by"]))
		}
	}
	if str(obj(done["subject"])["command"]) != "ls /tmp && echo ok" {
		t.Errorf("subject after the edit: %s, want the edited command", jsonString(done["subject"]))
	}
}

// Finance answers refunds, two of them (SPEC §12).
const editQuorumYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, policy: {allow: ["*"]}}
      - {id: u-2, policy: {allow: ["*"]}}
      - {id: u-3, policy: {allow: ["*"]}}
    groups:
      - {id: finance, members: [u-2, u-3]}
    approval_policies:
      - {id: refunds, match: ["tools.call:issue_refund"], approvers: {group: finance}, approve: 2}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write]}
      - {token: tok-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: tok-u3, principal: "person:u-3", scopes: [approvals:read, approvals:write]}
`

// An edit binds a call only its editor approved, so a request that waits
// for several people's allows cannot be edited, first or last: 400 field
// arguments, and nothing changes.
func TestAPIEditRefusedUnderAQuorum(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, servertest.WithConfig(editQuorumYAML)).URL
	main, u2, u3 := newClient(t, url, "tok-main"), newClient(t, url, "tok-u2"), newClient(t, url, "tok-u3")
	rec := main.submit(map[string]any{"tool": "issue_refund", "arguments": map[string]any{"amount": 4900}})
	edit := map[string]any{"amount": 1000}
	u2.answer(rec, "allow", "", "arguments", edit).wantProblem(t, "the first allow edits", http.StatusBadRequest, "InvalidRequest", "arguments")
	once := u2.answer(rec, "allow", "").want(t, "the first allow", http.StatusOK).body
	u3.answer(once, "allow", "", "arguments", edit).wantProblem(t, "the last allow edits", http.StatusBadRequest, "InvalidRequest", "arguments")
	if got := u3.get(str(rec["id"])); str(got["status"]) != "pending" || num(got["revision"]) != 1 || got["edited"] != nil ||
		jsonString(got["arguments"]) != `{"amount":4900}` {
		t.Errorf("refused edits changed the request: %s", jsonString(got))
	}
}

// TestOpenAPIEditedRecord: an answer with arguments, and the record with
// edited, match the served OpenAPI document.
func TestOpenAPIEditedRecord(t *testing.T) {
	srv := servertest.Start(t)
	s := loadSpec(t, srv.URL)
	rec := s.want(201, call{method: "POST", path: "/v1/requests", token: servertest.TokenMain, body: refundCall("p-1")})
	id := "/v1/requests/" + rec["id"].(string)
	edit := map[string]any{"payment_id": "p-1", "amount": 1000, "currency": "GBP"}
	s.want(400, call{method: "POST", path: id, token: servertest.TokenPerson, body: map[string]any{"expected": 0, "decision": "allow", "scope": "session", "arguments": edit}})
	done := s.want(200, call{method: "POST", path: id, token: servertest.TokenPerson, body: map[string]any{"expected": 0, "decision": "allow", "arguments": edit}})
	if done["edited"] == nil {
		t.Fatalf("no edited in %v", done)
	}
	s.want(200, call{method: "GET", path: id, token: servertest.TokenMain})
}
