package replay

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes rep as tables a person reads: the changes, then the
// summary by capability.
func WriteText(w io.Writer, rep Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "tenant %s: %d requests since %s, %d would change\n\n", rep.Tenant, rep.Requests, rep.Since.Format(time.RFC3339), len(rep.Changes))
	if len(rep.Changes) > 0 {
		fmt.Fprintln(tw, "REQUEST\tCREATED\tAGENT\tCAPABILITY\tOLD\tNEW\tWHY")
		for _, c := range rep.Changes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Request, c.CreatedAt.UTC().Format(time.RFC3339), c.Agent,
				c.Capability, c.Old, c.New, c.Reason)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw, "CAPABILITY\tREQUESTS\tPOLICY\tREAD\tGRANT\tRULE\tJUDGE\tDECIDER\tASKED")
	for _, l := range rep.Summary {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", l.Capability, l.Requests, l.Policy, l.Read, l.Grant,
			l.Rule, l.Judge, l.Decider, askedText(l.Asked))
	}
	return tw.Flush()
}

func askedText(as []Asked) string {
	if len(as) == 0 {
		return "-"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		who := a.Approver.Kind + ":" + a.Approver.ID
		if a.RequiredApprovals > 1 {
			who += fmt.Sprintf(" ×%d", a.RequiredApprovals)
		}
		parts[i] = fmt.Sprintf("%s (%d)", who, a.Requests)
	}
	return strings.Join(parts, ", ")
}
