package httpapi

import (
	"testing"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/links"
)

// A group's request waits on each member (SPEC §12): a member's own link
// fits it at its revision, or at one only others' allows came since; a
// member whose allow is counted has used theirs; a person outside the
// group, or an older revision, is stale.
func TestLinkFitsAGroupsRequest(t *testing.T) {
	tenant := &domain.Tenant{ID: "acme",
		Members: map[domain.MemberID]*domain.Member{"u-1": {ID: "u-1"}, "u-2": {ID: "u-2"}, "u-3": {ID: "u-3"}},
		Groups:  map[domain.GroupID]*domain.Group{"finance": {ID: "finance", Members: []domain.MemberID{"u-1", "u-2"}}}}
	person := func(id string) approvals.Caller {
		return approvals.Caller{Tenant: tenant, Principal: domain.Ref{Kind: domain.KindPerson, ID: id}}
	}
	r := &domain.Request{ID: domain.NewRequestID(), Tenant: "acme", Status: domain.StatusPending, Revision: 2, RequiredApprovals: 3,
		Approver:  &domain.Ref{Kind: domain.KindGroup, ID: "finance"},
		Approvals: domain.Approvals{{By: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, Scope: "once"}}}
	claim := func(id string, rev uint64) links.Claim {
		return links.Claim{Tenant: "acme", Request: r.ID, Revision: rev, Person: domain.MemberID(id), Decision: links.Approve}
	}
	for _, tc := range []struct {
		who  string
		rev  uint64
		want string
	}{
		{"u-2", 2, ""},
		{"u-2", 1, ""}, // only u-1's allow came since
		{"u-2", 0, linkStale},
		{"u-1", 2, linkUsed},
		{"u-3", 2, linkStale},
	} {
		if got := linkFits(claim(tc.who, tc.rev), person(tc.who), r); got != tc.want {
			t.Errorf("%s's link at revision %d: %q, want %q", tc.who, tc.rev, got, tc.want)
		}
	}
}
