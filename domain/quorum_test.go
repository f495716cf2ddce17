package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestApprovalsShape: approvals is always an array, required_approvals is
// on the record, and a clone's approvals are its own.
func TestApprovalsShape(t *testing.T) {
	r := Request{}
	b, _ := json.Marshal(&r)
	if !strings.Contains(string(b), `"approvals":[]`) || !strings.Contains(string(b), `"required_approvals":0`) {
		t.Fatalf("record = %s", b)
	}
	if r.Quorum() != 1 {
		t.Fatalf("Quorum of an old record = %d, want 1", r.Quorum())
	}
	r.Approvals = Approvals{{By: Ref{Kind: KindPerson, ID: "u-1"}, At: time.Unix(0, 0), Scope: ScopeSession}}
	c := r.Clone()
	c.Approvals[0].Scope = ScopeOnce
	c.Approvals = append(c.Approvals, Approval{By: Ref{Kind: KindPerson, ID: "u-2"}, Scope: ScopeLifetime})
	if r.Approvals[0].Scope != ScopeSession || len(r.Approvals) != 1 {
		t.Fatalf("clone shares approvals: %+v", r.Approvals)
	}
	if got := c.Approvals.SmallestScope(); got != ScopeOnce {
		t.Fatalf("SmallestScope = %q", got)
	}
	if !c.Approvals.By(Ref{Kind: KindPerson, ID: "u-2"}) || c.Approvals.By(Ref{Kind: KindPerson, ID: "u-3"}) {
		t.Fatal("By")
	}
}
