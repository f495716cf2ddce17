package notify

import (
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/links"
)

// A request waiting on a group gets one pair of links for each person it
// still waits on, each answering as that person (SPEC §12); a person's
// request keeps its one pair, and a group's request has no single pair.
func TestLinksForEachPersonOfAGroup(t *testing.T) {
	secret := []byte("k")
	l := &Links{PublicURL: "https://x.example", Secret: secret, Awaiting: func(r *domain.Request) []domain.MemberID {
		return []domain.MemberID{"u-3", "u-4"}
	}}
	r := &domain.Request{ID: "req_01JC0000000000000000000000", Tenant: "acme", Status: domain.StatusPending, Revision: 1,
		Approver: &domain.Ref{Kind: domain.KindGroup, ID: "finance"}, DeadlineAt: time.Now().Add(time.Hour)}
	if l.For(r) != nil {
		t.Fatal("a group's request got a single pair of links")
	}
	people := l.ForPeople(r)
	if len(people) != 2 {
		t.Fatalf("links for %d people, want 2", len(people))
	}
	for m, p := range people {
		c, err := links.Check(secret, p.ApproveURL[len("https://x.example/d/"):], time.Now())
		if err != nil || c.Person != m || c.Decision != links.Approve || c.Revision != 1 {
			t.Fatalf("%s's approve link: %+v, %v", m, c, err)
		}
	}
	r.Approver = &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	if l.For(r) == nil || l.ForPeople(r) != nil {
		t.Fatal("a person's request: one pair, and no links by person")
	}
	got, err := withMember([]byte(`{"id":"req_1"}`), "links_by_person", map[string]*Pair{"u-3": {ApproveURL: "a", DenyURL: "d"}})
	if err != nil || string(got) != `{"id":"req_1","links_by_person":{"u-3":{"approve_url":"a","deny_url":"d"}}}` {
		t.Fatalf("withMember = %s, %v", got, err)
	}
}
