package rpc_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestConflictInTheHTTPAPIsWords: an answer aimed at a requirement the
// request moved on from (its stage was allowed) is refused over /v1/rpc
// in the very words the HTTP API refuses the same expected revision with
// (SPEC §12: every surface says so in the same words), and changes
// nothing.
func TestConflictInTheHTTPAPIsWords(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"sessionIds": []string{"ses-w"}})
	id := submit(t, s, tokMain, map[string]any{"tool": "Bash", "session": "ses-w",
		"arguments": map[string]any{"command": "ls -la && rm -rf /tmp/x"},
		"subject":   map[string]any{"kind": "shell", "command": "ls -la && rm -rf /tmp/x"}})["id"].(string)
	first := w.expect("approval/requested", id)
	if d := w.decide(first, "allow_once"); d.Error != nil {
		t.Fatalf("allow stage 0: %s", d.raw)
	}
	w.expect("approval/requested", id)
	stale := w.decide(first, "deny")
	wantError(t, "the old requirement", stale, -32009, "RequestConflict")
	code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+id, tokPerson, map[string]any{"expected": 0, "decision": "deny"})
	var p struct{ Detail string }
	if err := json.Unmarshal(data, &p); err != nil || code != http.StatusConflict {
		t.Fatalf("HTTP at revision 0: %d %s", code, data)
	}
	if stale.Error == nil || stale.Error.Message != p.Detail || stale.Error.Data["detail"] != p.Detail {
		t.Errorf("/v1/rpc says %s; the HTTP API says %q", stale.raw, p.Detail)
	}
	if rec := record(t, s, tokPerson, id); rec["revision"] != 1.0 || rec["status"] != "pending" {
		t.Errorf("refused answers changed the request: %v", rec)
	}
}
