package notify

import (
	"strings"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/links"
)

// Links mints decision links (SPEC §10): <PublicURL>/d/<token>.
type Links struct {
	PublicURL string
	Secret    []byte
	// Awaiting returns the people a pending request still waits on (a
	// group's members less those whose allow it counts, SPEC §12); nil
	// gives a group's request no links.
	Awaiting func(*domain.Request) []domain.MemberID
}

// Pair is the links of one request revision for the person it waits on,
// as the "links" member of delivered event data.
type Pair struct {
	ApproveURL string `json:"approve_url"`
	DenyURL    string `json:"deny_url"`
}

// For returns the links of r, or nil when r is not pending on a person or
// l is nil.
func (l *Links) For(r *domain.Request) *Pair {
	if l == nil || r.Status != domain.StatusPending || r.Approver == nil || r.Approver.Kind != domain.KindPerson {
		return nil
	}
	return l.ForPerson(r, domain.MemberID(r.Approver.ID))
}

// ForPeople returns the links of a pending r waiting on a group, one pair
// for each person it still waits on (SPEC §12); nil otherwise.
func (l *Links) ForPeople(r *domain.Request) map[domain.MemberID]*Pair {
	if l == nil || l.Awaiting == nil || r.Status != domain.StatusPending || r.Approver == nil || r.Approver.Kind != domain.KindGroup {
		return nil
	}
	var out map[domain.MemberID]*Pair
	for _, m := range l.Awaiting(r) {
		if out == nil {
			out = map[domain.MemberID]*Pair{}
		}
		out[m] = l.ForPerson(r, m)
	}
	return out
}

// ForPerson returns the links of r's revision for person m.
func (l *Links) ForPerson(r *domain.Request, m domain.MemberID) *Pair {
	c := links.Claim{Tenant: r.Tenant, Request: r.ID, Revision: r.Revision, Person: m, Deadline: r.DeadlineAt}
	base := strings.TrimRight(l.PublicURL, "/") + "/d/"
	c.Decision = links.Approve
	p := &Pair{ApproveURL: base + links.Mint(l.Secret, c)}
	c.Decision = links.Deny
	p.DenyURL = base + links.Mint(l.Secret, c)
	return p
}
