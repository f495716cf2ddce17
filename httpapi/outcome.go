package httpapi

import (
	"strconv"

	"github.com/countersign/countersign/domain"
)

// outcomeText says in words where r stands, for pages and Slack notes,
// naming principals with who; an expiry never reads as a person's no.
func outcomeText(r *domain.Request, who func(domain.Ref) string) string {
	d := r.Decision
	switch {
	case r.Status == domain.StatusPending && r.Approver != nil:
		return "it waits on " + who(*r.Approver)
	case d == nil:
		return string(r.Status)
	case d.Status == domain.StatusExpired:
		return "it expired: no decision was made in time"
	case d.Status == domain.StatusCancelled:
		return "the agent cancelled it"
	}
	return string(d.Status) + " by " + who(d.By) + " at " + d.DecidedAt.UTC().Format("2006-01-02 15:04:05Z")
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
