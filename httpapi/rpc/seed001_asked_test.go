package rpc_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// These tests drive the seed client of seed001_test.go (the protocol's
// schema only): a client that answers only in its responses to approval/request.
// After session/resume, a requirement that becomes its to decide must
// reach it as approval/request, whatever made it its own.

// seedRequirement is the schema's ApprovalRequirementRef.
type seedRequirement struct {
	SourceIndex int `json:"sourceIndex"`
	Revision    int `json:"revision"`
}

func seedRequirementOf(t *testing.T, p seedParams) seedRequirement {
	t.Helper()
	var r seedRequirement
	if err := json.Unmarshal(p.CurrentRequirementID, &r); err != nil {
		t.Fatalf("seed client: currentRequirementId %s", p.CurrentRequirementID)
	}
	return r
}

// TestSeed001AskedWhenEscalatedToIt: u-1 follows ses-esc. agt_prog's
// shell call there waits on agt_main first, so u-1 is shown it (as the
// notification approval/requested, nothing offered). agt_main endorses it
// over HTTP: it moves to u-1, who is asked (approval/request) and allows
// stage 0 in its result; stage 1 is asked again, allowed in the result,
// and the request is approved by u-1.
func TestSeed001AskedWhenEscalatedToIt(t *testing.T) {
	t.Parallel()
	s := start(t)
	cl := seedDial(t, s.URL, tokPerson)
	if e := cl.call("session/resume", map[string]string{"sessionId": "ses-esc"}, nil); e != nil {
		t.Fatalf("session/resume: %d %s", e.Code, e.Message)
	}
	cmd := "ls -la && rm -rf /tmp/x"
	id := submit(t, s, tokProg, map[string]any{"tool": "Bash", "session": "ses-esc", "arguments": map[string]any{"command": cmd},
		"subject": map[string]any{"kind": "shell", "command": cmd}})["id"].(string)
	if _, p := cl.approval("approval/requested"); p.ApprovalID != id || len(p.AvailableChoices) != 0 {
		t.Fatalf("while it waits on agt_main: %s offered %v", p.ApprovalID, p.AvailableChoices)
	}
	if code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+id, tokMain, map[string]any{"expected": 0, "decision": "allow"}); code != http.StatusOK {
		t.Fatalf("agt_main endorses: %d %s", code, data)
	}
	req, p := cl.approval("approval/request")
	if p.ApprovalID != id || len(p.AvailableChoices) == 0 || seedRequirementOf(t, p) != (seedRequirement{0, 1}) {
		t.Fatalf("escalated to u-1: %s", req.Params)
	}
	cl.answer(req, "allow_once")
	req, p = cl.approval("approval/request")
	if p.ApprovalID != id || seedRequirementOf(t, p) != (seedRequirement{1, 2}) {
		t.Fatalf("stage 1: %s", req.Params)
	}
	cl.answer(req, "allow_once")
	cl.resolved(id)
	rec := record(t, s, tokPerson, id)
	if by, _ := rec["decision"].(map[string]any)["by"].(map[string]any); rec["status"] != "approved" || by["id"] != "u-1" {
		t.Fatalf("after the client's results: %v", rec)
	}
}

// backupRPCYAML: u-1 is covered by u-2 after 10m; tok-u2-admin is u-2
// with the admin scope, who sees every request of the tenant.
const backupRPCYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members:
      - {id: u-1, policy: {allow: ["*"]}, backup: u-2, answer_within: 10m}
      - {id: u-2, policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1}
    tokens:
      - {token: tok-main, principal: "agent:agt_main", scopes: [requests:write]}
      - {token: tok-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: tok-u2-admin, principal: "person:u-2", scopes: [approvals:read, approvals:write, admin]}
`

// TestSeed001AskedWhenItBecomesTheBackup: u-2 follows a session where a
// request waits on u-1. u-1 does not answer within 10m: the request moves
// to u-2, who is asked (approval/request) and answers in its result;
// the request is decided by u-2. Through tok-u2, u-2 does not see the
// request before it moves; through tok-u2-admin it is shown it first as
// a notification with nothing offered.
func TestSeed001AskedWhenItBecomesTheBackup(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(time.Now())
	s := servertest.Start(t, servertest.WithClock(clock), servertest.WithConfig(backupRPCYAML))
	type follower struct {
		cl              *seedClient
		session, answer string
		id              string
	}
	fs := []*follower{{cl: seedDial(t, s.URL, "tok-u2"), session: "ses-bk", answer: "deny"},
		{cl: seedDial(t, s.URL, "tok-u2-admin"), session: "ses-bk-admin", answer: "allow_once"}}
	for _, f := range fs {
		if e := f.cl.call("session/resume", map[string]string{"sessionId": f.session}, nil); e != nil {
			t.Fatalf("session/resume: %d %s", e.Code, e.Message)
		}
		f.id = submit(t, s, "tok-main", map[string]any{"tool": "deploy", "session": f.session})["id"].(string)
	}
	if _, p := fs[1].cl.approval("approval/requested"); p.ApprovalID != fs[1].id || len(p.AvailableChoices) != 0 {
		t.Fatalf("admin, while it waits on u-1: %s offered %v", p.ApprovalID, p.AvailableChoices)
	}
	clock.Set(time.Now().Add(10*time.Minute + time.Second)) // the record is stamped by the wall clock
	for _, f := range fs {
		req, p := f.cl.approval("approval/request")
		if p.ApprovalID != f.id || len(p.AvailableChoices) == 0 || seedRequirementOf(t, p).Revision != 1 {
			t.Fatalf("moved to u-2: %s", req.Params)
		}
		f.cl.answer(req, f.answer)
		f.cl.resolved(f.id)
		rec := record(t, s, "tok-u2", f.id)
		if by, _ := rec["decision"].(map[string]any)["by"].(map[string]any); by["id"] != "u-2" {
			t.Fatalf("after the backup's result: %v", rec)
		}
	}
}

// TestSeed001AskStandsThroughOthersApprovals: u-3 follows ses-q and is
// asked for a refund finance must allow twice. u-2's allow over HTTP
// changes the request only by another person's approval, so the ask
// stands: u-3 is notified (approval/updated, "1 of 2"), not asked again,
// and its result to the first ask applies and completes the quorum
// (SPEC §12).
func TestSeed001AskStandsThroughOthersApprovals(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, servertest.WithConfig(quorumYAML))
	cl := seedDial(t, s.URL, "tok-u3")
	if e := cl.call("session/resume", map[string]string{"sessionId": "ses-q"}, nil); e != nil {
		t.Fatalf("session/resume: %d %s", e.Code, e.Message)
	}
	id := submit(t, s, "tok-main", map[string]any{"tool": "issue_refund", "session": "ses-q"})["id"].(string)
	ask, p := cl.approval("approval/request")
	if p.ApprovalID != id || seedRequirementOf(t, p) != (seedRequirement{0, 0}) {
		t.Fatalf("asked: %s", ask.Params)
	}
	if code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+id, "tok-u2", map[string]any{"expected": 0, "decision": "allow"}); code != http.StatusOK {
		t.Fatalf("u-2 allows: %d %s", code, data)
	}
	if m, p := cl.approval("approval/updated"); p.ApprovalID != id || len(p.AvailableChoices) == 0 {
		t.Fatalf("after u-2's allow: %s", m.Params)
	}
	cl.answer(ask, "allow_once")
	cl.resolved(id)
	if rec := record(t, s, "tok-u1", id); rec["status"] != "approved" || len(rec["approvals"].([]any)) != 2 {
		t.Fatalf("after u-3's result to the first ask: %v", rec)
	}
}
