package httpapi

import (
	"strconv"

	"github.com/countersign/countersign/events"
)

// outcomeText says in words where r stands, for pages and Slack notes; an
// expiry never reads as a person's no.
func outcomeText(r *events.Request) string {
	d := r.Decision
	switch {
	case r.Status == events.StatusPending && r.Approver != nil:
		return "it waits on " + r.Approver.Kind + " " + r.Approver.ID
	case d == nil:
		return string(r.Status)
	case d.Status == events.StatusExpired:
		return "it expired: no decision was made in time"
	case d.Status == events.StatusCancelled:
		return "the agent cancelled it"
	}
	return string(d.Status) + " by " + d.By.Kind + " " + d.By.ID + " at " + d.DecidedAt.UTC().Format("2006-01-02 15:04:05Z")
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
