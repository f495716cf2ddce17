package domain

import (
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "tools.call:anything", true},
		{"tools.call:read_*", "tools.call:read_file", true},
		{"tools.call:read_*", "tools.call:write_file", false},
		{"apps.call:*/delete_*", "apps.call:conn-7/delete_user", true},
		{"apps.call:*/delete_*", "apps.call:conn-7/list_users", false},
		{"tools.call:Read_*", "tools.call:read_x", false},
		{"tools.call:a", "tools.call:ab", false},
		{"*:*", "agents.spawn:*", true},
		{"tools.call:a?c", "tools.call:abc", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestPolicy(t *testing.T) {
	p := &Policy{Allow: []string{"*"}, Deny: []string{"apps.call:*/delete_*"}}
	if !p.Permits("tools.call:issue_refund") || p.Permits("apps.call:c/delete_x") {
		t.Fatal("deny must win and allow * must allow the rest")
	}
	var none *Policy
	if none.Permits("tools.call:x") {
		t.Fatal("a member with no policy may do nothing")
	}
}

func TestIDs(t *testing.T) {
	seen := map[RequestID]bool{}
	var prev RequestID
	for i := 0; i < 1000; i++ {
		id := NewRequestID()
		if !ValidGeneratedID(string(id)) || seen[id] || id <= prev {
			t.Fatalf("id %d = %s: want fresh, valid and increasing", i, id)
		}
		seen[id], prev = true, id
	}
	at := time.Now()
	first, again := DerivedGrantID("req_a", "agt_b", at), DerivedGrantID("req_a", "agt_b", at)
	if first != again || first == DerivedGrantID("req_a", "agt_c", at) ||
		DerivedStageGrantID("req_a", "agt_b", 0, at) == DerivedStageGrantID("req_a", "agt_b", 1, at) {
		t.Fatal("derived grant ids must be stable per request and agent")
	}
}

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
}
