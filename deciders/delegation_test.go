package deciders_test

import (
	"testing"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// Next walks the request's recorded chain, not the agents' parents: in
// delegated work "lone" (member u-2, no parent) is decided by prog, then
// main, then main's member u-1, never by its own member first.
func TestNextWalksTheRecordedChain(t *testing.T) {
	f := newFixture(t)
	chain := []domain.AgentID{"main", "prog", "lone"}
	for _, tc := range []struct {
		from domain.AgentID
		want domain.Ref
	}{
		{"lone", domain.Ref{Kind: domain.KindAgent, ID: "prog"}},
		{"prog", domain.Ref{Kind: domain.KindAgent, ID: "main"}},
		{"main", domain.Ref{Kind: domain.KindPerson, ID: "u-1"}},
	} {
		if got := deciders.Next(f.views, "acme", chain, tc.from); got != tc.want {
			t.Errorf("Next from %s = %+v, want %+v", tc.from, got, tc.want)
		}
	}
	if got, want := deciders.Next(f.views, "acme", []domain.AgentID{"lone"}, "lone"), (domain.Ref{Kind: domain.KindPerson, ID: "u-2"}); got != want {
		t.Errorf("Next in lone's own chain = %+v, want %+v", got, want)
	}
}
