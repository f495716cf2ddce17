package notify

import (
	"strings"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/links"
)

// Links mints decision links (SPEC §10): <PublicURL>/d/<token>.
type Links struct {
	PublicURL string
	Secret    []byte
}

// Pair is the links of one request revision for the person it waits on,
// as the "links" member of delivered event data.
type Pair struct {
	ApproveURL string `json:"approve_url"`
	DenyURL    string `json:"deny_url"`
}

// For returns the links of r, or nil when r is not pending on a person or
// l is nil.
func (l *Links) For(r *events.Request) *Pair {
	if l == nil || r.Status != events.StatusPending || r.Approver == nil || r.Approver.Kind != events.KindPerson {
		return nil
	}
	c := links.Claim{Tenant: r.Tenant, Request: r.ID, Revision: r.Revision, Person: events.MemberID(r.Approver.ID), Deadline: r.DeadlineAt}
	base := strings.TrimRight(l.PublicURL, "/") + "/d/"
	c.Decision = links.Approve
	p := &Pair{ApproveURL: base + links.Mint(l.Secret, c)}
	c.Decision = links.Deny
	p.DenyURL = base + links.Mint(l.Secret, c)
	return p
}
