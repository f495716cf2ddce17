package replay

import (
	"fmt"
	"strings"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// What decided a request, or who it would wait on (Outcome.By).
const (
	ByPolicy      = domain.KindPolicy
	ByRead        = domain.KindRead
	ByOwnSubagent = domain.KindOwnSubagent
	ByGrant       = domain.KindGrant
	ByRule        = domain.KindRule
	ByJudge       = "judge"   // reaches the rules; the judge is not called
	ByDecider     = "decider" // waits on the decider above
	ByRefused     = "refused" // its agent is not in the config: no request
)

// Outcome is what the check order did with a request at its creation.
type Outcome struct {
	By     string        `json:"by"`
	Status domain.Status `json:"status,omitempty"`
	// ID is the member, read pattern, grant or rule that decided.
	ID string `json:"id,omitempty"`
	// Approver, RequiredApprovals and Backup: who a request that waits
	// is waiting on (By judge or decider).
	Approver          *domain.Ref `json:"approver,omitempty"`
	RequiredApprovals int         `json:"required_approvals,omitempty"`
	Backup            *domain.Ref `json:"backup,omitempty"`
}

// outcomeOf reads r's outcome; t (nil: unknown) names the backup.
func outcomeOf(r *domain.Request, t *domain.Tenant) Outcome {
	if r.Decision != nil && r.Status != domain.StatusPending {
		return Outcome{By: r.Decision.By.Kind, Status: r.Decision.Status, ID: r.Decision.By.ID}
	}
	o := Outcome{By: ByDecider, Status: domain.StatusPending, Approver: r.Approver, RequiredApprovals: max(r.RequiredApprovals, 1)}
	if r.JudgeEscalated {
		o.By = ByJudge
	}
	if t != nil {
		if to, _, ok := deciders.BackupIn(t, r.Approver, nil); ok {
			o.Backup = &to
		}
	}
	return o
}

// same reports whether a and b are the same outcome: what decided (not
// which grant of several), or who is asked, how many, and, when
// backups are known on both sides, the backup.
func same(a, b Outcome, backups bool) bool {
	if a.By != b.By || a.Status != b.Status || a.RequiredApprovals != b.RequiredApprovals || !sameRef(a.Approver, b.Approver) {
		return false
	}
	return !backups || sameRef(a.Backup, b.Backup)
}

func sameRef(a, b *domain.Ref) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// String is o in a few words: "approved by read tools.call:get_*",
// "decider group:finance ×2 (backup u-2)".
func (o Outcome) String() string {
	switch o.By {
	case ByJudge, ByDecider:
		s := o.By + " " + refString(o.Approver)
		if o.RequiredApprovals > 1 {
			s += fmt.Sprintf(" ×%d", o.RequiredApprovals)
		}
		if o.Backup != nil {
			s += " (backup " + o.Backup.ID + ")"
		}
		return s
	case ByRefused:
		return "refused"
	}
	return strings.TrimSpace(fmt.Sprintf("%s by %s %s", o.Status, o.By, o.ID))
}

func refString(r *domain.Ref) string {
	if r == nil {
		return "nobody"
	}
	return r.Kind + ":" + r.ID
}

// reason says in words why r's outcome under t is nw rather than old.
func reason(t *domain.Tenant, r *domain.Request, old, nw Outcome) string {
	switch nw.By {
	case ByPolicy:
		if r.Decision != nil && r.Decision.Note != "" {
			return r.Decision.Note
		}
		return fmt.Sprintf("the policy of member %s does not allow %s", nw.ID, r.Capability)
	case ByRead:
		return fmt.Sprintf("read rule %q approves it at once", nw.ID)
	case ByOwnSubagent:
		return "it delegates work to the agent's own subagent"
	case ByGrant:
		return fmt.Sprintf("grant %s in force at its creation %s it", nw.ID, verb(nw.Status))
	case ByRule:
		return fmt.Sprintf("rule %s, which its judge quoted, is kept word for word", nw.ID)
	case ByJudge:
		if old.By == ByRule {
			return "the rule its judge quoted is not kept word for word: the judge would read the rules again"
		}
		return "it reaches the agent's rules: the judge would read them (not called in a replay)"
	}
	return routing(t, r, nw)
}

func routing(t *domain.Tenant, r *domain.Request, nw Outcome) string {
	s := "it waits on " + refString(nw.Approver)
	if p := t.ApprovalPolicyFor(r.Capability); p != nil && nw.Approver != nil && nw.Approver.Kind == domain.KindGroup {
		s = fmt.Sprintf("approval policy %s sends it to group %s, %d approval(s) needed", p.ID, p.Group, p.Approve)
	}
	if nw.Backup != nil {
		s += ", backup " + nw.Backup.ID
	}
	return s
}

func verb(s domain.Status) string {
	if s == domain.StatusDenied {
		return "denies"
	}
	return "approves"
}
