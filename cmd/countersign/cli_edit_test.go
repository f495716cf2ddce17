package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// approve --arguments FILE approves with edits (SPEC §5); a file that is
// not JSON, or a scope other than once, is refused and changes nothing.
func TestCLIApproveWithEdits(t *testing.T) {
	srv := servertest.Start(t)
	rec := cliSubmit(t, srv, servertest.TokenMain, "")
	dir := t.TempDir()
	edited, bad := filepath.Join(dir, "edited.json"), filepath.Join(dir, "bad.json")
	if err := os.WriteFile(edited, []byte(`{"payment_id": "payment_123", "amount": 1000, "currency": "GBP"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"amount": 1000`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"approve", string(rec.ID), "--arguments", bad},
		{"approve", string(rec.ID), "--arguments", filepath.Join(dir, "missing.json")},
		{"approve", string(rec.ID), "--arguments", edited, "--scope", "session"},
	} {
		if r := cliCall(t, srv, servertest.TokenPerson, args...); r.code != cliExitRefused {
			t.Errorf("countersign %s: exit %d, want %d; stderr %q", strings.Join(args, " "), r.code, cliExitRefused, r.stderr)
		}
	}
	if r := cliCall(t, srv, servertest.TokenPerson, "approve", string(rec.ID), "--arguments", bad); !strings.Contains(r.stderr, "bad.json is not JSON") {
		t.Errorf("approve --arguments with a file that is not JSON: stderr %q, want it to say so", r.stderr)
	}
	if got := cliRecord(t, srv, rec.ID); got.Status != domain.StatusPending || got.Revision != 0 {
		t.Fatalf("refused edits changed the request: %s revision %d", got.Status, got.Revision)
	}
	out := mustCLI(t, srv, servertest.TokenPerson, "approve", string(rec.ID), "--arguments", edited)
	if !strings.Contains(out, "with edits by person:u-1") {
		t.Errorf("approve --arguments printed %q, want it to say with edits", out)
	}
	got := cliRecord(t, srv, rec.ID)
	if got.Status != domain.StatusApproved || string(got.Arguments) != `{"payment_id":"payment_123","amount":1000,"currency":"GBP"}` ||
		got.Edited == nil || got.Edited.OriginalDigest != rec.CallDigest {
		t.Errorf("record after approve --arguments: %s %s edited %+v", got.Status, got.Arguments, got.Edited)
	}
}
