package rpc_test

import (
	"fmt"
	"net/http"
	"testing"
)

// seed001Required are the required fields of the protocol's ApprovalRequestParams (SPEC §8).
var seed001Required = []string{"approvalId", "availableChoices", "currentRequirementId", "itemId", "judgeEscalated",
	"protectedWrite", "rawArgs", "sessionId", "sourceRange", "subject", "taskId", "toolCallId", "toolName", "turnId", "viewCursor"}

// TestSubscribeDecideResolved: a client subscribed to a session receives
// approval/requested for a request submitted over HTTP, with every
// required field of ApprovalRequestParams, decides it by choiceId, and receives
// approval/resolved; the decision is the HTTP answer's (same record).
func TestSubscribeDecideResolved(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	res := w.subscribe(map[string]any{"sessionIds": []string{"ses-1"}})
	if res["subscriptionId"] == "" || res["resumed"] != false {
		t.Fatalf("subscribe result %v", res)
	}
	rec := submit(t, s, tokMain, map[string]any{"tool": "deploy", "session": "ses-1", "turn": "t-1", "tool_call_id": "call-1",
		"arguments": map[string]any{"env": "prod"}, "reason": "ship it"})
	id := rec["id"].(string)
	n := w.expect("approval/requested", id)
	for _, f := range seed001Required {
		if _, ok := n.Params[f]; !ok {
			t.Errorf("approval/requested lacks %s: %s", f, n.raw)
		}
	}
	for f, want := range map[string]any{"sessionId": "ses-1", "turnId": "t-1", "toolCallId": "call-1", "toolName": "deploy",
		"rawArgs": `{"env":"prod"}`, "taskId": "t-1", "itemId": "call-1", "judgeEscalated": false, "protectedWrite": false,
		"viewCursor": id + ":0", "eventCursor": id + ":0"} {
		if got := n.Params[f]; got != want {
			t.Errorf("%s = %v, want %v", f, got, want)
		}
	}
	for _, f := range []string{"reviewerReason", "subagentOrigin", "cuaCardFacts"} {
		if _, ok := n.Params[f]; ok {
			t.Errorf("%s present on a plain request: %s", f, n.raw)
		}
	}
	if got := fmt.Sprint(n.Params["sourceRange"]); got != "map[from:"+id+":0 to:"+id+":0]" {
		t.Errorf("sourceRange %s", got)
	}
	if got := fmt.Sprint(n.Params["currentRequirementId"]); got != "map[revision:0 sourceIndex:0]" {
		t.Errorf("currentRequirementId %s", got)
	}
	if got := choiceIDs(n); got != "allow_once,allow_session,allow_always,deny,deny_with_reason" {
		t.Errorf("person's choices %s", got)
	}
	d := w.decide(n, "allow_session")
	if d.Error != nil || d.Result["status"] != "approved" || d.Result["approvalId"] != id {
		t.Fatalf("decide: %s", d.raw)
	}
	r := w.expect("approval/resolved", id)
	if r.Params["status"] != "approved" || r.Params["eventCursor"] != id+":1" {
		t.Errorf("resolved %s", r.raw)
	}
	dec := r.Params["decision"].(map[string]any)
	if dec["scope"] != "session" || fmt.Sprint(dec["by"]) != "map[id:u-1 kind:person]" {
		t.Errorf("resolved decision %v", dec)
	}
	got := record(t, s, tokPerson, id)
	if got["status"] != "approved" || got["revision"] != 1.0 {
		t.Errorf("record after decide: %v at %v", got["status"], got["revision"])
	}
	// The claim is no news for approvers: the next notification is the next request's.
	if code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+id+"/claim", tokMain, map[string]any{"call_digest": got["call_digest"]}); code != http.StatusOK {
		t.Fatalf("claim: %d %s", code, data)
	}
	next := submit(t, s, tokMain, map[string]any{"tool": "migrate", "session": "ses-1"})["id"].(string)
	w.expect("approval/requested", next)
}

// TestChoicesPerDecider: a person without a session gets no
// allow_session; an agent decider that does not hold endorses
// (allow_once only); one that holds by a session grant may give at most
// session; a caller that is not the current approver, or lacks
// approvals:write, gets none. A choice not offered is refused and
// changes nothing.
func TestChoicesPerDecider(t *testing.T) {
	t.Parallel()
	s := start(t)
	person, main, ro := dial(t, s.URL, tokPerson), dial(t, s.URL, tokMain), dial(t, s.URL, tokPersonRO)
	person.subscribe(map[string]any{"inbox": true})
	main.subscribe(map[string]any{"inbox": true})
	ro.subscribe(map[string]any{"inbox": true})

	nosession := submit(t, s, tokMain, map[string]any{"tool": "deploy"})["id"].(string)
	if got := choiceIDs(person.expect("approval/requested", nosession)); got != "allow_once,allow_always,deny,deny_with_reason" {
		t.Errorf("person, no session: %s", got)
	}
	if got := choiceIDs(ro.expect("approval/requested", nosession)); got != "" {
		t.Errorf("read-only token: %s, want none", got)
	}

	// An unknown subject kind is answered once only.
	odd := submit(t, s, tokMain, map[string]any{"tool": "click", "session": "ses-o", "subject": map[string]any{"kind": "cua"}})["id"].(string)
	if got := choiceIDs(person.expect("approval/requested", odd)); got != "allow_once,deny,deny_with_reason" {
		t.Errorf("unknown subject kind: %s", got)
	}

	// agt_main does not hold deploy: allow is an endorsement.
	sub := submit(t, s, tokProg, map[string]any{"tool": "deploy", "session": "ses-9"})["id"].(string)
	n := main.expect("approval/requested", sub)
	if got := choiceIDs(n); got != "allow_once,deny,deny_with_reason" {
		t.Errorf("agent that does not hold: %s", got)
	}
	wantError(t, "allow_session not offered", main.decide(n, "allow_session"), -32602, "InvalidRequest", "choiceId")
	wantError(t, "deny_with_reason without reason", main.decide(n, "deny_with_reason"), -32602, "InvalidRequest", "reason")
	if got := record(t, s, tokPerson, sub); got["revision"] != 0.0 || got["status"] != "pending" {
		t.Errorf("refused choices changed the request: %v", got)
	}
	if d := main.decide(n, "allow_once", "reason", "looks fine"); d.Error != nil || d.Result["status"] != "pending" {
		t.Fatalf("endorse: %s", d.raw)
	}
	if u := main.expect("approval/updated", sub); choiceIDs(u) != "" {
		t.Errorf("after endorsing, agt_main is offered %s", choiceIDs(u))
	}
	pn := person.expect("approval/requested", sub)
	// The person allows for the session: agt_prog and the endorser agt_main get session grants.
	if d := person.decide(pn, "allow_session"); d.Error != nil {
		t.Fatalf("person allows: %s", d.raw)
	}
	person.expect("approval/resolved", sub)
	main.expect("approval/resolved", sub)

	// agt_main's own build in ses-7, allowed for the session: agt_main
	// then holds build in ses-7 by a session grant, so for agt_prog's
	// build there it may give at most session.
	own := submit(t, s, tokMain, map[string]any{"tool": "build", "session": "ses-7"})["id"].(string)
	if d := person.decide(person.expect("approval/requested", own), "allow_session"); d.Error != nil {
		t.Fatalf("person allows build: %s", d.raw)
	}
	person.expect("approval/resolved", own)
	held := submit(t, s, tokProg, map[string]any{"tool": "build", "session": "ses-7"})["id"].(string)
	hn := main.expect("approval/requested", held)
	if got := choiceIDs(hn); got != "allow_once,allow_session,deny,deny_with_reason" {
		t.Errorf("agent holding by a session grant: %s", got)
	}
	wantError(t, "allow_always above the grant", main.decide(hn, "allow_always"), -32602, "InvalidRequest", "choiceId")
	if d := main.decide(hn, "allow_session"); d.Error != nil || d.Result["status"] != "approved" {
		t.Fatalf("agt_main allows for the session: %s", d.raw)
	}
	main.expect("approval/resolved", held)
}
