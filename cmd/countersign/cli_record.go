package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/countersign/countersign/events"
)

// cliWriteRecord prints a request for a person: what it is, what the agent
// said (quoted), where it stands, and its arguments as pretty JSON.
func cliWriteRecord(w io.Writer, r *events.Request, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, kv := range cliRecordFields(r, now) {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
	}
	tw.Flush()
	fmt.Fprintf(w, "Arguments:\n  %s\n", cliPrettyJSON(r.Arguments, "  "))
}

// cliRecordFields are the lines of a record, label and value; optional
// ones only when set.
func cliRecordFields(r *events.Request, now time.Time) [][2]string {
	f := [][2]string{
		{"Request", cliCell(string(r.ID))},
		{"Status", cliStatusLine(r, now)},
		{"Agent", cliCell(string(r.Agent))},
		{"Capability", cliCapability(r.Capability)},
	}
	f = cliOptional(f, "Subject", cliSubject(r.Subject))
	for i, st := range r.Stages {
		f = append(f, [2]string{fmt.Sprintf("Stage %d", i+1), cliStage(r, i, st)})
	}
	f = cliOptional(f, "Session", cliText(r.Session, 80))
	f = cliOptional(f, "Turn", cliText(r.Turn, 80))
	f = cliOptional(f, "Tool call", cliText(r.ToolCallID, 80))
	f = append(f, [2]string{"Reason", cliQuote(r.Reason, 500) + "  (the agent's words: data, not instructions)"})
	f = append(f, [2]string{"Chain", cliChain(r.Chain)})
	for _, e := range r.Endorsements {
		f = append(f, [2]string{"Endorsed by", cliEndorsement(e)})
	}
	for _, e := range r.Abstentions {
		f = append(f, [2]string{"Abstained", cliEndorsement(e)})
	}
	f = cliOptional(f, "Judge", cliJudge(r))
	f = append(f, [][2]string{
		{"Created", cliTime(r.CreatedAt)},
		{"Deadline", cliTime(r.DeadlineAt) + " (timeout " + cliCell(r.Timeout) + ")"},
		{"Revision", fmt.Sprint(r.Revision)},
		{"Decision", cliDecisionLine(r)},
	}...)
	return append(f, cliDecisionDetails(r)...)
}

func cliOptional(f [][2]string, label, value string) [][2]string {
	if value == "" {
		return f
	}
	return append(f, [2]string{label, value})
}

func cliSubject(s events.Subject) string {
	if s.Kind == "" || s.Kind == events.SubjectTool {
		return ""
	}
	if s.Command != "" {
		return cliText(s.Kind, 32) + ": " + cliQuote(s.Command, 500)
	}
	return cliText(s.Kind, 32)
}

// cliStage is one stage of a shell request: its text, and whether it is
// allowed, waiting (the current one: the next answer applies to it), or
// opaque (no grant ever covers it).
func cliStage(r *events.Request, i int, st events.Stage) string {
	line := cliQuote(st.Text, 200)
	switch {
	case st.AllowedBy != nil:
		line += "  allowed by " + cliBy(*st.AllowedBy)
	case i == r.CurrentStage && r.Status == events.StatusPending:
		line += "  <- your answer applies to this stage"
	}
	if st.Opaque != "" {
		line += "  (never covered by a grant: " + cliCell(st.Opaque) + ")"
	}
	return line
}

func cliChain(chain []events.AgentID) string {
	if len(chain) == 0 {
		return "-"
	}
	parts := make([]string, len(chain))
	for i, a := range chain {
		parts[i] = cliCell(string(a))
	}
	return strings.Join(parts, " → ") + "  (top first, the requester last)"
}

func cliEndorsement(e events.Endorsement) string {
	s := cliCell(string(e.Agent)) + " at " + cliTime(e.At)
	if e.Note != "" {
		s += ": " + cliQuote(e.Note, 200)
	}
	return s
}

func cliJudge(r *events.Request) string {
	if !r.JudgeEscalated {
		return ""
	}
	s := "the rules judge did not decide; it passed the request on"
	if r.ReviewerReason != nil && *r.ReviewerReason != "" {
		s += ": " + cliQuote(*r.ReviewerReason, 120)
	}
	return s
}

// cliStatusLine says where a request stands. An expired request reads as
// what it is — nobody decided in time — and never as a denial.
func cliStatusLine(r *events.Request, now time.Time) string {
	switch r.Status {
	case events.StatusPending:
		return "pending — waiting for " + cliRef(r.Approver) + ", deadline " + cliUntil(r.DeadlineAt, now)
	case events.StatusExpired:
		return "expired — no decision was made in time"
	case events.StatusCancelled:
		return "cancelled — the requesting agent withdrew it before a decision"
	}
	return cliCell(string(r.Status))
}

// cliDecisionLine summarizes r.Decision in one line.
func cliDecisionLine(r *events.Request) string {
	d := r.Decision
	if d == nil {
		return "none yet"
	}
	switch d.Status {
	case events.StatusExpired:
		return "none — no decision was made in time; the deadline passed at " + cliTime(d.DecidedAt)
	case events.StatusCancelled:
		return "none — cancelled by " + cliRef(&d.By) + " at " + cliTime(d.DecidedAt)
	}
	s := fmt.Sprintf("%s by %s, scope %s, at %s", cliCell(string(d.Status)), cliBy(d.By), cliCell(d.Scope), cliTime(d.DecidedAt))
	if d.ExpiresAt != nil {
		s += "; usable until " + cliTime(*d.ExpiresAt)
	}
	if r.ClaimedAt != nil {
		s += "; claimed at " + cliTime(*r.ClaimedAt)
	}
	return s
}

// cliBy names who or what decided.
func cliBy(by events.Ref) string {
	id := cliText(by.ID, 80)
	switch by.Kind {
	case events.KindPolicy:
		return "the policy of member " + id
	case events.KindRead:
		return "the read rule " + id
	case events.KindOwnSubagent:
		return "delegation to the agent's own subagent"
	case events.KindGrant:
		return "grant " + id
	case events.KindRule:
		return "rule " + id + " (through the judge)"
	}
	return cliRef(&by)
}

func cliDecisionDetails(r *events.Request) [][2]string {
	if r.Decision == nil {
		return nil
	}
	var f [][2]string
	if r.Decision.Note != "" {
		f = append(f, [2]string{"Note", cliQuote(r.Decision.Note, 500)})
	}
	if r.Decision.QuotedRule != "" {
		f = append(f, [2]string{"Quoted rule", cliQuote(r.Decision.QuotedRule, 500)})
	}
	return f
}
