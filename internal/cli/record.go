package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/countersign/countersign/display"
	"github.com/countersign/countersign/domain"
)

// writeRecord prints a request for a person: what it is, what the agent
// said (quoted), where it stands, and its arguments as pretty JSON.
func (p people) writeRecord(w io.Writer, r *domain.Request, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, kv := range p.recordFields(r, now) {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
	}
	tw.Flush()
	fmt.Fprintf(w, "Arguments:\n  %s\n", prettyJSON(r.Arguments, "  "))
}

// recordFields are the lines of a record, label and value; optional
// ones only when set.
func (p people) recordFields(r *domain.Request, now time.Time) [][2]string {
	f := [][2]string{
		{"Request", cell(string(r.ID))},
		{"Status", p.statusLine(r, now)},
		{"Agent", cell(string(r.Agent))},
		{"Capability", capability(r.Capability)},
	}
	f = optional(f, "Subject", subjectText(r.Subject))
	for i, st := range r.Stages {
		f = append(f, [2]string{fmt.Sprintf("Stage %d", i+1), p.stageText(r, i, st)})
	}
	f = optional(f, "Session", text(r.Session, 80))
	f = optional(f, "Turn", text(r.Turn, 80))
	f = optional(f, "Tool call", text(r.ToolCallID, 80))
	f = append(f, [2]string{"Reason", quote(r.Reason, 500) + "  (the agent's words: data, not instructions)"})
	f = append(f, [2]string{"Chain", chainText(r.Chain)})
	for _, e := range r.Endorsements {
		f = append(f, [2]string{"Endorsed by", endorsement(e)})
	}
	for _, e := range r.Abstentions {
		f = append(f, [2]string{"Abstained", endorsement(e)})
	}
	f = optional(f, "Judge", judgeText(r))
	f = append(f, p.approvalLines(r)...)
	f = append(f, [][2]string{
		{"Created", stamp(r.CreatedAt)},
		{"Deadline", stamp(r.DeadlineAt) + " (timeout " + cell(r.Timeout) + ")"},
		{"Revision", fmt.Sprint(r.Revision)},
		{"Decision", p.decisionLine(r)},
	}...)
	return append(f, decisionDetails(r)...)
}

func optional(f [][2]string, label, value string) [][2]string {
	if value == "" {
		return f
	}
	return append(f, [2]string{label, value})
}

func subjectText(s domain.Subject) string {
	if s.Kind == "" || s.Kind == domain.SubjectTool {
		return ""
	}
	if s.Command != "" {
		return text(s.Kind, 32) + ": " + quote(s.Command, 500)
	}
	return text(s.Kind, 32)
}

// stageText is one stage of a shell request: its text, and whether it is
// allowed, waiting (the current one: the next answer applies to it), or
// opaque (no grant ever covers it).
func (p people) stageText(r *domain.Request, i int, st domain.Stage) string {
	line := quote(st.Text, 200)
	switch {
	case st.AllowedBy != nil:
		line += "  allowed by " + p.byText(*st.AllowedBy)
	case i == r.CurrentStage && r.Status == domain.StatusPending:
		line += "  <- your answer applies to this stage"
		if st.Grant != "" {
			line += "; --scope session or lifetime leaves a grant of " + cell(st.Grant)
		}
	}
	if st.Opaque != "" {
		line += "  (no prefix grant covers it: " + cell(st.Opaque) + ")"
	}
	return line
}

func chainText(chain []domain.AgentID) string {
	if len(chain) == 0 {
		return "-"
	}
	parts := make([]string, len(chain))
	for i, a := range chain {
		parts[i] = cell(string(a))
	}
	return strings.Join(parts, " → ") + "  (top first, the requester last)"
}

func endorsement(e domain.Endorsement) string {
	s := cell(string(e.Agent)) + " at " + stamp(e.At)
	if e.Note != "" {
		s += ": " + quote(e.Note, 200)
	}
	return s
}

func judgeText(r *domain.Request) string {
	if !r.JudgeEscalated {
		return ""
	}
	s := "the rules judge did not decide; it passed the request on"
	if r.ReviewerReason != nil && *r.ReviewerReason != "" {
		s += ": " + quote(*r.ReviewerReason, 120)
	}
	return s
}

// statusLine says where a request stands. An expired request reads as
// what it is — nobody decided in time — and never as a denial.
func (p people) statusLine(r *domain.Request, now time.Time) string {
	switch r.Status {
	case domain.StatusPending:
		return "pending — waiting for " + p.ref(r.Approver) + ", deadline " + until(r.DeadlineAt, now)
	case domain.StatusExpired:
		return "expired — no decision was made in time"
	case domain.StatusCancelled:
		return "cancelled — the requesting agent withdrew it before a decision"
	}
	return cell(string(r.Status))
}

// decisionLine summarizes r.Decision in one line.
func (p people) decisionLine(r *domain.Request) string {
	d := r.Decision
	if d == nil {
		return "none yet"
	}
	switch d.Status {
	case domain.StatusExpired:
		return "none — no decision was made in time; the deadline passed at " + stamp(d.DecidedAt)
	case domain.StatusCancelled:
		return "none — cancelled by " + p.ref(&d.By) + " at " + stamp(d.DecidedAt)
	}
	s := fmt.Sprintf("%s by %s, scope %s, at %s", cell(string(d.Status)), p.byText(d.By), cell(d.Scope), stamp(d.DecidedAt))
	if d.ExpiresAt != nil {
		s += "; usable until " + stamp(*d.ExpiresAt)
	}
	if r.ClaimedAt != nil {
		s += "; claimed at " + stamp(*r.ClaimedAt)
	}
	if r.Edited != nil {
		s += "; with edits by " + p.byText(r.Edited.By) + ": the call runs with the arguments shown"
	}
	return s
}

// byText names who or what decided.
func (p people) byText(by domain.Ref) string {
	id := text(by.ID, 80)
	switch by.Kind {
	case domain.KindPolicy:
		if n := p.names[by.ID]; n != "" {
			return "the policy of member " + display.Person(text(n, 80), id)
		}
		return "the policy of member " + id
	case domain.KindRead:
		return "the read rule " + id
	case domain.KindOwnSubagent:
		return "delegation to the agent's own subagent"
	case domain.KindGrant:
		return "grant " + id
	case domain.KindRule:
		return "rule " + id + " (through the judge)"
	}
	return p.ref(&by)
}

func decisionDetails(r *domain.Request) [][2]string {
	if r.Decision == nil {
		return nil
	}
	var f [][2]string
	if r.Decision.Note != "" {
		f = append(f, [2]string{"Note", quote(r.Decision.Note, 500)})
	}
	if r.Decision.QuotedRule != "" {
		f = append(f, [2]string{"Quoted rule", quote(r.Decision.QuotedRule, 500)})
	}
	return f
}

// approvalLines are the people's allows a request counts (SPEC §12): a
// line saying how many of how many, then one line each; none for a
// request that needs one allow and has none.
func (p people) approvalLines(r *domain.Request) [][2]string {
	if r.Quorum() == 1 && len(r.Approvals) == 0 {
		return nil
	}
	f := [][2]string{{"Approvals", fmt.Sprintf("%d of %d", len(r.Approvals), r.Quorum())}}
	for _, a := range r.Approvals {
		s := p.byText(a.By) + " at " + stamp(a.At) + ", scope " + cell(a.Scope)
		if a.Note != "" {
			s += ": " + quote(a.Note, 200)
		}
		f = append(f, [2]string{"Approved by", s})
	}
	return f
}
