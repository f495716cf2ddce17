package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
)

// countersign show lists a group's approvals: how many of how many, then
// who, when, with which scope and note (SPEC §12); a plain request shows
// no approvals line until a person allows it.
func TestShowListsApprovals(t *testing.T) {
	at := time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC)
	r := &domain.Request{ID: "req_1", Status: domain.StatusPending, Approver: &domain.Ref{Kind: domain.KindGroup, ID: "finance"},
		RequiredApprovals: 2, Approvals: domain.Approvals{{By: domain.Ref{Kind: domain.KindPerson, ID: "u-2"}, At: at, Scope: "once", Note: "checked"}}}
	var b bytes.Buffer
	people{}.writeRecord(&b, r, at)
	out := b.String()
	for _, want := range []string{"Approvals    1 of 2", "Approved by  person:u-2 at 2026-09-16T12:00:00Z, scope once: \"checked\"", "waiting for group:finance"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	people{}.writeRecord(&b, &domain.Request{ID: "req_2", Status: domain.StatusPending, RequiredApprovals: 1}, at)
	if strings.Contains(b.String(), "Approvals") {
		t.Errorf("a plain pending request shows approvals:\n%s", b.String())
	}
}

// countersign show says, on the stage an answer applies to, which grant
// --scope session or lifetime leaves.
func TestShowSaysWhichGrant(t *testing.T) {
	at := time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC)
	for grant, want := range map[string]string{
		"any `git push …`":     "leaves a grant of any `git push …`",
		"exactly this command": "leaves a grant of exactly this command",
	} {
		r := &domain.Request{ID: "req_1", Status: domain.StatusPending, Subject: domain.Subject{Kind: domain.SubjectShell, Command: "x"},
			Stages: []domain.Stage{{Text: "x", Prefix: []string{"x"}, Grant: grant}}}
		var b bytes.Buffer
		people{}.writeRecord(&b, r, at)
		if !strings.Contains(b.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, b.String())
		}
	}
}
