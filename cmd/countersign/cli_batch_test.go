package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// cliTeamYAML names its person, so that the CLI can say who decided.
const cliTeamYAML = `tenants:
  - id: acme
    members:
      - {id: u-1, name: "Ada Lovelace", policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: ada-token, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: main-token, principal: "agent:agt_main", scopes: [requests:write, approvals:read]}
`

func cliSubmitBody(t *testing.T, srv *servertest.Server, token, body string) domain.Request {
	t.Helper()
	var rec domain.Request
	cliHTTP(t, srv, http.MethodPost, "/v1/requests", token, body, &rec)
	return rec
}

func cliTeamRecord(t *testing.T, srv *servertest.Server, id domain.RequestID) domain.Request {
	t.Helper()
	var rec domain.Request
	cliHTTP(t, srv, http.MethodGet, "/v1/requests/"+string(id), "ada-token", "", &rec)
	return rec
}

// issue 36's "countersign approve A B C": three refunds answered at once,
// each with its own compare-and-set and its own result line; the person
// is named in the results and in show.
func TestCLIApproveBatch(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(cliTeamYAML))
	var ids []string
	for _, amount := range []string{"4900", "1200", "300"} {
		rec := cliSubmitBody(t, srv, "main-token", `{"tool":"issue_refund","arguments":{"payment_id":"p-`+amount+`","amount":`+amount+`}}`)
		ids = append(ids, string(rec.ID))
	}
	out := mustCLI(t, srv, "ada-token", append(append([]string{"approve"}, ids...), "--reason", "All confirmed.")...)
	if !strings.Contains(out, "Answering 3 requests of tools.call:issue_refund with keys {amount, payment_id}") {
		t.Errorf("the batch does not say what it answers:\n%s", out)
	}
	for _, id := range ids {
		if !strings.Contains(out, id+": applied: approved by Ada Lovelace (u-1)") {
			t.Errorf("no result line for %s:\n%s", id, out)
		}
		if rec := cliTeamRecord(t, srv, domain.RequestID(id)); rec.Status != domain.StatusApproved {
			t.Errorf("%s is %s", id, rec.Status)
		}
	}
	show := mustCLI(t, srv, "ada-token", "show", ids[0])
	if !strings.Contains(show, "approved by Ada Lovelace (u-1)") {
		t.Errorf("show does not name who decided:\n%s", show)
	}
}

// A batch with one that does not apply answers the others, says why
// that one did not (already decided: a conflict; unknown: not found),
// and exits 1.
func TestCLIBatchReportsEach(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(cliTeamYAML))
	a := cliSubmitBody(t, srv, "main-token", `{"tool":"issue_refund","arguments":{"amount":1}}`)
	b := cliSubmitBody(t, srv, "main-token", `{"tool":"issue_refund","arguments":{"amount":2}}`)
	mustCLI(t, srv, "ada-token", "deny", string(b.ID))
	missing := "req_01JC0000000000000000000000"
	r := cliCall(t, srv, "ada-token", "approve", string(a.ID), string(b.ID), missing)
	if r.code != cliExitRefused {
		t.Fatalf("exit %d, want 1: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		string(a.ID) + ": applied: approved by Ada Lovelace (u-1)",
		string(b.ID) + ": not applied: conflict",
		missing + ": not applied: not found",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "1 of 3 answers applied") {
		t.Errorf("stderr %q", r.stderr)
	}
	if rec := cliTeamRecord(t, srv, b.ID); rec.Status != domain.StatusDenied {
		t.Errorf("the denied one became %s", rec.Status)
	}
}

// A mixed batch (two capabilities, or the same one with other argument
// keys) is refused before anything is answered.
func TestCLIBatchRefusesMixed(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(cliTeamYAML))
	refund := cliSubmitBody(t, srv, "main-token", `{"tool":"issue_refund","arguments":{"amount":1}}`)
	other := cliSubmitBody(t, srv, "main-token", `{"tool":"issue_refund","arguments":{"amount":1,"currency":"GBP"}}`)
	mail := cliSubmitBody(t, srv, "main-token", `{"tool":"send_email","arguments":{"amount":1}}`)
	for _, pair := range [][2]domain.Request{{refund, other}, {refund, mail}} {
		r := cliCall(t, srv, "ada-token", "approve", string(pair[0].ID), string(pair[1].ID))
		if r.code == cliExitOK || !strings.Contains(r.stderr, "one capability whose arguments have the same keys") ||
			!strings.Contains(r.stderr, "nothing was answered") {
			t.Errorf("mixed batch: exit %d, stderr %q", r.code, r.stderr)
		}
		if strings.Contains(r.stdout, "applied") {
			t.Errorf("a mixed batch answered: %s", r.stdout)
		}
	}
	for _, rec := range []domain.Request{refund, other, mail} {
		if got := cliTeamRecord(t, srv, rec.ID); got.Status != domain.StatusPending || got.Revision != rec.Revision {
			t.Errorf("%s changed: %s revision %d", rec.ID, got.Status, got.Revision)
		}
	}
}

// A shell call is answered stage by stage: approving the first stage
// says so and that the second waits for the same person.
func TestCLIApproveSaysWhichStage(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(cliTeamYAML))
	rec := cliSubmitBody(t, srv, "main-token", `{"tool":"Bash","session":"ses-1","arguments":{"command":"git status && git push origin main"},"subject":{"kind":"shell","command":"git status && git push origin main"}}`)
	out := mustCLI(t, srv, "ada-token", "approve", string(rec.ID))
	if !strings.Contains(out, "stage 1 of 2 allowed; stage 2 waits for you") || strings.Contains(out, "passed up") {
		t.Errorf("approve of stage 1 printed %q", out)
	}
	out = mustCLI(t, srv, "ada-token", "approve", string(rec.ID))
	if !strings.Contains(out, "approved by Ada Lovelace (u-1)") {
		t.Errorf("approve of stage 2 printed %q", out)
	}
}
