package events

import "testing"

// The brief in a review bundle is the one the decider gave: that of the
// agent right below it in the chain.
func TestReviewBundleBriefIsTheOneGiven(t *testing.T) {
	briefs := map[AgentID]string{"main": "main's own", "prog": "fix the job", "sub": "check one refund"}
	r := &Request{ID: "req_1", Chain: []AgentID{"main", "prog", "sub"}}
	tests := []struct {
		decider AgentID
		want    string
	}{{"main", "fix the job"}, {"prog", "check one refund"}, {"sub", ""}, {"stranger", ""}}
	for _, tt := range tests {
		b := NewReviewBundle(r, &Agent{ID: tt.decider, Brief: briefs[tt.decider]}, func(a AgentID) string { return briefs[a] })
		if b.Decider.Brief != tt.want || b.Decider.ID != tt.decider || b.Request.ID != "req_1" {
			t.Errorf("decider %s: bundle %+v, want brief %q", tt.decider, b.Decider, tt.want)
		}
	}
	if got, want := ReviewSubject("acme", "agt_main"), "countersign.acme.review.agt_main"; got != want {
		t.Errorf("ReviewSubject = %q, want %q", got, want)
	}
}
