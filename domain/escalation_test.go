package domain

import (
	"testing"
	"time"
)

// A clone's escalation is its own: a move recorded on it leaves the
// original (a mirror's copy) alone.
func TestCloneKeepsEscalationApart(t *testing.T) {
	r := Request{Escalation: &Escalation{By: Ref{Kind: KindDeadline}, Passed: []MemberID{"u-1"}}}
	c := r.Clone()
	c.Escalation.Passed[0], c.Escalation.At = "u-9", time.Unix(1, 0)
	c.Escalation.Passed = append(c.Escalation.Passed, "u-2")
	if r.Escalation.Passed[0] != "u-1" || len(r.Escalation.Passed) != 1 || !r.Escalation.At.IsZero() {
		t.Errorf("the original changed with its clone: %+v", r.Escalation)
	}
}
