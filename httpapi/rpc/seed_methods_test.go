package rpc_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestOneNotificationPerConnection: a connection whose subscriptions
// overlap (a session twice, the inbox, session/resume of the same
// session) is sent each change once.
func TestOneNotificationPerConnection(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPersonRO) // read-only: shown as notifications
	w.subscribe(map[string]any{"sessionIds": []string{"ses-o"}})
	w.subscribe(map[string]any{"sessionIds": []string{"ses-o", "ses-z"}})
	w.subscribe(map[string]any{"inbox": true})
	if m := w.call("session/resume", map[string]any{"sessionId": "ses-o"}); m.Error != nil {
		t.Fatalf("session/resume: %s", m.raw)
	}
	a := submit(t, s, tokMain, map[string]any{"tool": "a", "session": "ses-o"})["id"].(string)
	w.expect("approval/requested", a)
	rec := record(t, s, tokPerson, a)
	if code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+a, tokPerson, map[string]any{"expected": rec["revision"], "decision": "deny"}); code != http.StatusOK {
		t.Fatalf("deny: %d %s", code, data)
	}
	w.expect("approval/resolved", a)
	b := submit(t, s, tokMain, map[string]any{"tool": "b", "session": "ses-o"})["id"].(string)
	w.expect("approval/requested", b)                                 // nothing of a in between
	w.call("session/resume", map[string]any{"sessionId": "ses-none"}) // a round trip: b's copies would come before its result
	if len(w.pending) > 0 {
		t.Errorf("a second copy: %s", w.pending[0].raw)
	}
}

// TestApprovalRequestAnswers: after session/resume a decider is sent
// approval/request; an error response, a result naming a choice that is
// not offered, one without the reason its choice requires, a second
// response to the same request, and a result for a requirement that
// moved on decide nothing; a good result decides the requirement the
// request named.
func TestApprovalRequestAnswers(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	if m := w.call("session/resume", map[string]any{"sessionId": "ses-q"}); m.Error != nil || m.Result["sessionId"] != "ses-q" {
		t.Fatalf("session/resume: %s", m.raw)
	}
	id := submit(t, s, tokMain, map[string]any{"tool": "Bash", "session": "ses-q",
		"arguments": map[string]any{"command": "ls && rm -rf /tmp/x"},
		"subject":   map[string]any{"kind": "shell", "command": "ls && rm -rf /tmp/x"}})["id"].(string)
	req := w.expect("approval/request", id)
	answer := func(req msg, body string) {
		t.Helper()
		w.write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + body + `}`))
	}
	answer(req, `"error":{"code":-32000,"message":"later"}`)
	answer(req, `"result":{"choiceId":"allow_once"}`) // a second response to the same request
	for _, body := range []string{`"result":{"choiceId":"allow_forever"}`, `"result":{"choiceId":"deny_with_reason"}`, `"result":{"choice":"deny"}`} {
		w.call("session/resume", map[string]any{"sessionId": "ses-q"}) // each request takes one response: ask again
		answer(w.expect("approval/request", id), body)
	}
	w.call("approval/unsubscribe", map[string]any{"subscriptionId": "sub-none"}) // a round trip: the answers were read
	if rec := record(t, s, tokPerson, id); rec["revision"] != 0.0 {
		t.Fatalf("refused answers changed the request: revision %v", rec["revision"])
	}
	w.call("session/resume", map[string]any{"sessionId": "ses-q"}) // each request takes one response: ask again
	stale := w.expect("approval/request", id)
	w2 := dial(t, s.URL, tokPerson)
	w2.call("session/resume", map[string]any{"sessionId": "ses-q"})
	answer2 := w2.expect("approval/request", id)
	w2.write([]byte(`{"jsonrpc":"2.0","id":` + string(answer2.ID) + `,"result":{"choiceId":"allow_once"}}`)) // stage 0
	next := w.expect("approval/request", id)
	if r := next.Params["currentRequirementId"].(map[string]any); r["sourceIndex"] != 1.0 {
		t.Fatalf("after stage 0: %v", r)
	}
	answer(stale, `"result":{"choiceId":"deny"}`) // stage 0 again: stale
	w.call("approval/unsubscribe", map[string]any{"subscriptionId": "sub-none"})
	if rec := record(t, s, tokPerson, id); rec["status"] != "pending" || rec["revision"] != 1.0 {
		t.Fatalf("a stale result changed the request: %v at %v", rec["status"], rec["revision"])
	}
	answer(next, `"result":{"choiceId":"deny_with_reason","reason":"not today"}`)
	if r := w.expect("approval/resolved", id); r.Params["status"] != "denied" {
		t.Errorf("resolved %s", r.raw)
	}
}

// TestSeedMethodsBadInput: malformed session/resume and view/page params
// are -32602, an unknown method -32601, a cursor no longer kept (or not
// the caller's) -32010; none of them follows a session.
func TestSeedMethodsBadInput(t *testing.T) {
	t.Parallel()
	s := start(t)
	id := submit(t, s, tokMain, map[string]any{"tool": "a", "session": "ses-b"})["id"].(string)
	w := dial(t, s.URL, tokPerson)
	x := dial(t, s.URL, tokXPerson)
	prog := dial(t, s.URL, tokProg) // agt_main's request is not agt_prog's to see
	cases := []struct {
		what, method string
		c            *ws
		params       map[string]any
		code         int
		problem      []string
	}{
		{"resume without a session", "session/resume", w, map[string]any{}, -32602, []string{"InvalidRequest", "sessionId"}},
		{"resume, unknown field", "session/resume", w, map[string]any{"sessionId": "ses-b", "from": 1}, -32602, []string{"InvalidRequest", "from"}},
		{"page without a cursor", "view/page", w, map[string]any{}, -32602, []string{"InvalidRequest", "cursor"}},
		{"page, a cursor that does not parse", "view/page", w, map[string]any{"cursor": "yesterday"}, -32602, []string{"InvalidRequest", "cursor"}},
		{"page, a grant's cursor", "view/page", w, map[string]any{"cursor": "grt_01JC0000000000000000000000:created"}, -32602, []string{"InvalidRequest", "cursor"}},
		{"page, limit too large", "view/page", w, map[string]any{"cursor": id + ":0", "limit": 201}, -32602, []string{"InvalidRequest", "limit"}},
		{"page, a cursor not kept", "view/page", w, map[string]any{"cursor": "req_01JC0000000000000000000000:0"}, -32010, []string{"CursorExpired"}},
		{"page, a revision not stored", "view/page", w, map[string]any{"cursor": id + ":7"}, -32010, []string{"CursorExpired"}},
		{"page, another tenant's cursor", "view/page", x, map[string]any{"cursor": id + ":0"}, -32010, []string{"CursorExpired"}},
		{"page, a cursor of a request not the caller's", "view/page", prog, map[string]any{"cursor": id + ":0"}, -32010, []string{"CursorExpired"}},
		{"unknown method", "session/pause", w, map[string]any{"sessionId": "ses-b"}, -32601, nil},
	}
	for _, tc := range cases {
		wantError(t, tc.what, tc.c.call(tc.method, tc.params), tc.code, tc.problem...)
	}
	// Nothing followed ses-b: a change of it sends nothing, and the
	// connection still shows requirements as notifications.
	b := submit(t, s, tokMain, map[string]any{"tool": "b", "session": "ses-b"})["id"].(string)
	w.call("approval/unsubscribe", map[string]any{"subscriptionId": "sub-none"}) // a round trip
	if len(w.pending) > 0 {
		t.Errorf("a refused call followed the session: %s", w.pending[0].raw)
	}
	w.subscribe(map[string]any{"sessionIds": []string{"ses-b"}})
	w.expect("approval/requested", id)
	w.expect("approval/requested", b)
	var page struct {
		Events []json.RawMessage `json:"events"`
	}
	m := w.call("view/page", map[string]any{"cursor": id + ":0", "limit": 1})
	raw, _ := json.Marshal(m.Result)
	if json.Unmarshal(raw, &page) != nil || len(page.Events) != 1 || m.Result["nextCursor"] != b+":0" {
		t.Errorf("a page of one: %s", m.raw)
	}
}

// TestProjectedSubagentAndFacts: a registered subagent's approval in a
// session of its own is shown on its parent's session (sessionId the
// parent's, with subagentOrigin); a computer_use approval carries
// cuaCardFacts and an allowed stage allowedAt.
func TestProjectedSubagentAndFacts(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"sessionIds": []string{"ses-parent"}})
	spawn := submit(t, s, tokProg, map[string]any{"capability": map[string]any{"action": "agents.spawn", "target": "*"}, "session": "ses-parent"})["id"].(string)
	rec := record(t, s, tokPerson, spawn)
	if rec["status"] == "pending" { // endorse as agt_main, then allow
		main := dial(t, s.URL, tokMain)
		main.subscribe(map[string]any{"inbox": true})
		main.decide(main.expect("approval/requested", spawn), "allow_once")
		for rec = record(t, s, tokPerson, spawn); rec["approver"].(map[string]any)["kind"] != "person"; rec = record(t, s, tokPerson, spawn) {
		}
		if code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+spawn, tokPerson, map[string]any{"expected": rec["revision"], "decision": "allow"}); code != http.StatusOK {
			t.Fatalf("allow spawn: %d %s", code, data)
		}
	}
	code, data := s.API(t).Do(http.MethodPost, "/v1/agents", tokProg, map[string]any{"request_id": spawn})
	if code != http.StatusCreated {
		t.Fatalf("register: %d %s", code, data)
	}
	var reg struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(data, &reg)
	child := submit(t, s, reg.Token, map[string]any{"tool": "computer", "session": "ses-child",
		"arguments": map[string]any{"url": "https://bank.example/transfer", "window": "Chrome", "steps": []string{"click Send"}},
		"subject":   map[string]any{"kind": "computer_use"}})["id"].(string)
	var n msg
	for n = w.next(); n.Params["approvalId"] != child; n = w.next() {
	}
	if n.Params["sessionId"] != "ses-parent" || n.Params["subagentOrigin"] == nil {
		t.Errorf("projected: sessionId %v, subagentOrigin %v", n.Params["sessionId"], n.Params["subagentOrigin"])
	}
	facts, _ := json.Marshal(n.Params["cuaCardFacts"])
	if string(facts) != `{"page":"https://bank.example/transfer","steps":["click Send"],"window":"Chrome"}` {
		t.Errorf("cuaCardFacts %s", facts)
	}

	sh := submit(t, s, tokMain, map[string]any{"tool": "Bash", "session": "ses-parent",
		"arguments": map[string]any{"command": "ls && rm x"}, "subject": map[string]any{"kind": "shell", "command": "ls && rm x"}})["id"].(string)
	for n = w.next(); n.Params["approvalId"] != sh; n = w.next() {
	}
	if _, ok := n.Params["subagentOrigin"]; ok {
		t.Errorf("the parent's own approval has subagentOrigin: %s", n.raw)
	}
	w.decide(n, "allow_once")
	for n = w.next(); n.Params["approvalId"] != sh; n = w.next() {
	}
	stages := n.Params["subject"].(map[string]any)["stages"].([]any)
	if stages[0].(map[string]any)["allowedAt"] == nil || stages[1].(map[string]any)["allowedAt"] != nil {
		t.Errorf("allowedAt: %v", stages)
	}
}
