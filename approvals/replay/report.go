package replay

import (
	"cmp"
	"slices"
	"time"

	"github.com/countersign/countersign/domain"
)

// Report is what a replay found (SPEC §16).
type Report struct {
	Tenant domain.TenantID `json:"tenant"`
	Since  time.Time       `json:"since"`
	Until  *time.Time      `json:"until,omitempty"`
	// Requests counts the window's requests; Changes lists, in the log's
	// order, each whose outcome or approver would change.
	Requests int      `json:"requests"`
	Changes  []Change `json:"changes"`
	// Summary is the candidate's outcomes, by capability.
	Summary []Line `json:"summary"`
}

// Change is one request the candidate would treat otherwise.
type Change struct {
	Request    domain.RequestID `json:"request"`
	CreatedAt  time.Time        `json:"created_at"`
	Agent      domain.AgentID   `json:"agent"`
	Capability string           `json:"capability"`
	Old        Outcome          `json:"old"`
	New        Outcome          `json:"new"`
	Reason     string           `json:"reason"`
}

// Line counts one capability's requests by what would decide them, and
// who would be asked.
type Line struct {
	Capability string  `json:"capability"`
	Requests   int     `json:"requests"`
	Policy     int     `json:"policy"`
	Read       int     `json:"read"` // own_subagent included: both need no decision
	Grant      int     `json:"grant"`
	Rule       int     `json:"rule"`
	Judge      int     `json:"judge"`
	Decider    int     `json:"decider"`
	Refused    int     `json:"refused,omitempty"`
	Asked      []Asked `json:"asked"`
}

// Asked is who a capability's requests would wait on, and how often.
type Asked struct {
	Approver          domain.Ref `json:"approver"`
	RequiredApprovals int        `json:"required_approvals"`
	Requests          int        `json:"requests"`
}

type reportBuilder struct {
	rep     Report
	lines   map[string]*Line
	backups bool
}

func newReport(in Input) *reportBuilder {
	rep := Report{Tenant: in.Candidate.ID, Since: in.Since.UTC(), Changes: []Change{}}
	if !in.Until.IsZero() {
		u := in.Until.UTC()
		rep.Until = &u
	}
	return &reportBuilder{rep: rep, lines: map[string]*Line{}, backups: in.Running != nil}
}

func (b *reportBuilder) add(r *domain.Request, res result) {
	b.rep.Requests++
	capStr := r.Capability.String()
	if !same(res.old, res.new, b.backups) {
		b.rep.Changes = append(b.rep.Changes, Change{Request: r.ID, CreatedAt: r.CreatedAt, Agent: r.Agent,
			Capability: capStr, Old: res.old, New: res.new, Reason: res.why})
	}
	l := b.lines[capStr]
	if l == nil {
		l = &Line{Capability: capStr, Asked: []Asked{}}
		b.lines[capStr] = l
	}
	l.count(res.new)
}

func (l *Line) count(o Outcome) {
	l.Requests++
	switch o.By {
	case ByPolicy:
		l.Policy++
	case ByRead, ByOwnSubagent:
		l.Read++
	case ByGrant:
		l.Grant++
	case ByRule:
		l.Rule++
	case ByRefused:
		l.Refused++
	case ByJudge, ByDecider:
		if o.By == ByJudge {
			l.Judge++
		} else {
			l.Decider++
		}
		l.ask(o)
	}
}

func (l *Line) ask(o Outcome) {
	var who domain.Ref
	if o.Approver != nil {
		who = *o.Approver
	}
	for i := range l.Asked {
		if l.Asked[i].Approver == who && l.Asked[i].RequiredApprovals == o.RequiredApprovals {
			l.Asked[i].Requests++
			return
		}
	}
	l.Asked = append(l.Asked, Asked{Approver: who, RequiredApprovals: o.RequiredApprovals, Requests: 1})
}

func (b *reportBuilder) finish() Report {
	b.rep.Summary = make([]Line, 0, len(b.lines))
	for _, l := range b.lines {
		b.rep.Summary = append(b.rep.Summary, *l)
	}
	slices.SortFunc(b.rep.Summary, func(x, y Line) int { return cmp.Compare(x.Capability, y.Capability) })
	return b.rep
}
