package main

import (
	"encoding/json"

	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

const refundInput = `{"payment_id":"payment_123","amount":4900,"currency":"GBP"}`

// A refund a person approved with a smaller amount runs with that amount
// through Claude Code: the hook allows with updatedInput, having claimed
// the edited call; a harness that cannot take edited input (Codex) is
// denied, saying why.
func TestHookRunsAnApprovalWithEdits(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	edited := map[string]any{"payment_id": "payment_123", "amount": 1000, "currency": "GBP"}

	h := startHook(t, srv.URL, "dev-main", hookInput("issue_refund", refundInput), "claude-code", "--wait", "30s")
	r := a.AwaitPending("dev-person", "issue_refund")
	approved := a.Edit("dev-person", r.ID, edited)
	out := h.finish(t)
	d, reason := claudeDecision(t, out)
	hso, _ := out["hookSpecificOutput"].(map[string]any)
	if got, _ := json.Marshal(hso["updatedInput"]); d != "allow" || string(got) != `{"amount":1000,"currency":"GBP","payment_id":"payment_123"}` {
		t.Fatalf("got %s %q with updatedInput %s; want allow with the edited refund", d, reason, got)
	}
	if !strings.Contains(reason, "approved with edits by person u-1") {
		t.Errorf("reason %q, want it to say the call was approved with edits", reason)
	}
	if rec := a.Get("dev-main", r.ID); rec.ClaimedAt == nil || rec.CallDigest != approved.CallDigest {
		t.Errorf("record after the hook: claimed %v digest %s; want claimed with the edited digest %s", rec.ClaimedAt, rec.CallDigest, approved.CallDigest)
	}
	code, body := a.Do("POST", "/v1/requests/"+string(r.ID)+"/claim", "dev-main", map[string]any{"call_digest": approved.Edited.OriginalDigest})
	if code != 409 {
		t.Errorf("claim with the original digest: %d %s, want 409", code, body)
	}

	h = startHook(t, srv.URL, "dev-main", hookInput("issue_refund", refundInput), "claude-code", "--format", "codex", "--wait", "30s")
	r = a.AwaitPending("dev-person", "issue_refund")
	a.Edit("dev-person", r.ID, edited)
	if d, reason := claudeDecision(t, h.finish(t)); d != "deny" || !strings.Contains(reason, "approved only with edits this harness cannot apply") {
		t.Errorf("codex: got %s %q, want a deny saying the call was approved only with edits", d, reason)
	}
	if rec := a.Get("dev-main", r.ID); rec.ClaimedAt != nil {
		t.Errorf("codex claimed an approval with edits it cannot apply")
	}
}

// An interrupted turn leaves no pending request: the harness's Stop event
// cancels what the turn left waiting (Codex: by turn_id; Claude Code,
// which sends none: by session), and the Stop is never objected to.
func TestHookStopCancelsTheTurn(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a := srv.API(t)
	for _, tc := range []struct{ format, stop string }{
		{"codex", `{"session_id":"ses-hook","turn_id":"turn-1","hook_event_name":"Stop","stop_hook_active":false}`},
		{"claude", `{"session_id":"ses-claude","transcript_path":"/tmp/t.jsonl","hook_event_name":"Stop","stop_hook_active":false}`},
	} {
		in := hookInput("deploy_"+tc.format, `{"env":"prod"}`)
		if tc.format == "claude" {
			in = strings.Replace(strings.Replace(in, `,"turn_id":"turn-1"`, "", 1), "ses-hook", "ses-claude", 1)
		}
		h := startHook(t, srv.URL, "dev-main", in, "claude-code", "--format", tc.format, "--wait", "30s")
		r := a.AwaitPending("dev-person", "deploy_"+tc.format)
		kept := a.Get("dev-main", submitOther(t, a, r).ID) // another turn's request stays

		if out := startHook(t, srv.URL, "dev-main", tc.stop, "claude-code", "--format", tc.format).finish(t); len(out) != 0 {
			t.Errorf("%s: Stop answered %v, want {} (no objection)", tc.format, out)
		}
		if rec := a.Get("dev-main", r.ID); rec.Status != domain.StatusCancelled {
			t.Errorf("%s: the turn's request is %s after Stop, want cancelled", tc.format, rec.Status)
		}
		for _, p := range a.Pending("dev-person") {
			if p.ID == r.ID {
				t.Errorf("%s: %s still pending after Stop", tc.format, r.ID)
			}
		}
		if rec := a.Get("dev-main", kept.ID); rec.Status != domain.StatusPending {
			t.Errorf("%s: another turn's request is %s after Stop, want pending", tc.format, rec.Status)
		}
		if d, reason := claudeDecision(t, h.finish(t)); d != "deny" || !strings.Contains(reason, "cancelled") {
			t.Errorf("%s: the waiting call got %s %q, want a deny saying it was cancelled", tc.format, d, reason)
		}
	}
}

// submitOther submits a call like r's in another turn.
func submitOther(t *testing.T, a servertest.API, r domain.Request) domain.Request {
	t.Helper()
	code, data := a.Do("POST", "/v1/requests", "dev-main", map[string]any{"tool": r.Tool, "arguments": map[string]any{"env": "dev"},
		"session": r.Session, "turn": r.Turn + "-other"})
	var rec domain.Request
	if err := json.Unmarshal(data, &rec); code != 201 || err != nil || rec.Status != domain.StatusPending {
		t.Fatalf("submit in another turn: %d %s", code, data)
	}
	return rec
}
