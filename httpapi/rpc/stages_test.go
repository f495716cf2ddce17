package rpc_test

import (
	"testing"
)

// TestShellStageByStage: a staged shell request is decided over RPC stage
// by stage: allow stage 0, the server re-sends approval/requested for
// sourceIndex 1 (same viewCursor and judgeEscalated), allow it, resolved
// approved. A decide aimed at the old stage is stale and changes nothing.
func TestShellStageByStage(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"sessionIds": []string{"ses-sh"}})
	id := submit(t, s, tokMain, map[string]any{"tool": "Bash", "session": "ses-sh",
		"arguments": map[string]any{"command": "ls -la && rm -rf /tmp/x"},
		"subject":   map[string]any{"kind": "shell", "command": "ls -la && rm -rf /tmp/x"}})["id"].(string)
	first := w.expect("approval/requested", id)
	if got := first.Params["currentRequirementId"].(map[string]any); got["sourceIndex"] != 0.0 || got["revision"] != 0.0 {
		t.Fatalf("first requirement %v", got)
	}
	subj := first.Params["subject"].(map[string]any)
	if stages, _ := subj["stages"].([]any); subj["kind"] != "shell" || len(stages) != 2 {
		t.Errorf("subject %v, want shell with two stages", subj)
	}
	if d := w.decide(first, "allow_once"); d.Error != nil || d.Result["status"] != "pending" {
		t.Fatalf("allow stage 0: %s", d.raw)
	}
	second := w.expect("approval/requested", id)
	req := second.Params["currentRequirementId"].(map[string]any)
	if req["sourceIndex"] != 1.0 || req["revision"] != 1.0 {
		t.Errorf("re-sent requirement %v, want stage 1 at revision 1", req)
	}
	if second.Params["viewCursor"] != first.Params["viewCursor"] || second.Params["judgeEscalated"] != first.Params["judgeEscalated"] {
		t.Errorf("the re-send changed viewCursor or judgeEscalated: %s", second.raw)
	}
	wantError(t, "the old stage again", w.decide(first, "allow_once"), -32009, "RequestConflict")
	if d := w.decide(second, "allow_once"); d.Error != nil || d.Result["status"] != "approved" {
		t.Fatalf("allow stage 1: %s", d.raw)
	}
	if r := w.expect("approval/resolved", id); r.Params["status"] != "approved" {
		t.Errorf("resolved %s", r.raw)
	}
}

// TestProtectedWrite: a protected write offers only allow once and
// reject, and is decided only while a client is subscribed to its session.
func TestProtectedWrite(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"inbox": true})
	id := submit(t, s, tokMain, map[string]any{"tool": "Write", "session": "ses-pw",
		"arguments": map[string]any{"file_path": ".git/config"},
		"subject":   map[string]any{"kind": "tool", "protected_write": true}})["id"].(string)
	n := w.expect("approval/requested", id)
	if n.Params["protectedWrite"] != true || choiceIDs(n) != "allow_once,deny" {
		t.Fatalf("protectedWrite %v, choices %s", n.Params["protectedWrite"], choiceIDs(n))
	}
	wantError(t, "allow_session", w.decide(n, "allow_session"), -32602, "InvalidRequest", "choiceId")
	unwatched := w.decide(n, "allow_once")
	wantError(t, "nobody watches the session", unwatched, -32009, "RequestConflict")
	if unwatched.Error != nil && unwatched.Error.Data["reason"] != "protected_write_unwatched" {
		t.Errorf("nobody watches the session: reason %v", unwatched.Error.Data["reason"])
	}
	watcher := dial(t, s.URL, tokPerson)
	sub := watcher.subscribe(map[string]any{"sessionIds": []string{"ses-pw"}})
	watcher.call("approval/unsubscribe", map[string]any{"subscriptionId": sub["subscriptionId"]})
	wantError(t, "the watcher left", w.decide(n, "allow_once"), -32009, "RequestConflict")
	if rec := record(t, s, tokPerson, id); rec["revision"] != 0.0 {
		t.Errorf("refused decides changed the request: revision %v", rec["revision"])
	}
	watcher.subscribe(map[string]any{"sessionIds": []string{"ses-pw"}})
	if d := w.decide(n, "allow_once"); d.Error != nil || d.Result["status"] != "approved" {
		t.Fatalf("decide while watched: %s", d.raw)
	}
}
