package adapter

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/countersign/countersign/domain"
)

// Kind says what became of a call. Exactly one kind describes each Do.
type Kind string

const (
	// Ran: the call was approved, the approval claimed for it, and run was
	// called.
	Ran Kind = "ran"
	// Denied: a decider, a policy, a grant or a rule said no.
	Denied Kind = "denied"
	// Expired: no decision was made before the request's deadline. Nobody
	// said no.
	Expired Kind = "expired"
	// ApprovalExpired: the call was approved, but the approval expired
	// before the call could start.
	ApprovalExpired Kind = "approval_expired"
	// Cancelled: the call was abandoned (the caller's context was
	// cancelled) or its requester cancelled the request.
	Cancelled Kind = "cancelled"
	// NotObtained: approval could not be obtained: countersign was
	// unreachable or refused, the wait limit passed, or the approval could
	// not be used for this call (digest mismatch, already claimed). Nobody
	// said no.
	NotObtained Kind = "not_obtained"
)

// Outcome is what became of one call. Kind is always set; Request is the
// last record seen (nil when none was created or recovered).
type Outcome struct {
	Kind    Kind
	Request *domain.Request
	// Err is the cause for NotObtained, Cancelled and ApprovalExpired; it
	// wraps one of the package's sentinel errors.
	Err error
}

// RequestID is the id of the request, or "" when none is known.
func (o Outcome) RequestID() domain.RequestID {
	if o.Request == nil {
		return ""
	}
	return o.Request.ID
}

// Decision is the request's decision, or nil.
func (o Outcome) Decision() *domain.Decision {
	if o.Request == nil {
		return nil
	}
	return o.Request.Decision
}

// String says what happened in words an agent or a person can act on. It
// never says that someone denied a call unless a decision did; notes and
// quoted rules appear as quoted data.
func (o Outcome) String() string {
	d := o.Decision()
	switch o.Kind {
	case Ran:
		if o.Request != nil && o.Request.Edited != nil {
			return "countersign: approved with edits by " + by(d) + note(d) + o.ref() +
				"; the approval is claimed for the edited call, which runs instead"
		}
		return "countersign: approved by " + by(d) + note(d) + o.ref() + "; the approval is claimed for this call"
	case Denied:
		return "countersign: denied by " + by(d) + note(d) + o.ref() + "; the call did not run"
	case Expired:
		return "countersign: no decision was made in time" + o.ref() + expiredAt(o.Request) +
			"; nobody denied the call, and it did not run"
	case ApprovalExpired:
		return "countersign: the approval by " + by(d) + o.ref() + " expired" + approvalExpiry(d) +
			" before the call could start; the call did not run"
	case Cancelled:
		return o.cancelled()
	}
	return "countersign: approval could not be obtained" + o.ref() + ": " + cause(o.Err) +
		"; nobody denied the call, and it did not run"
}

func (o Outcome) ref() string {
	if o.Request == nil || o.Request.ID == "" {
		return ""
	}
	return " (request " + string(o.Request.ID) + ")"
}

// by names who decided.
func by(d *domain.Decision) string {
	if d == nil {
		return "an unknown decider"
	}
	switch d.By.Kind {
	case domain.KindPerson:
		return "person " + d.By.ID
	case domain.KindAgent:
		return "agent " + d.By.ID
	case domain.KindPolicy:
		return "the policy of member " + d.By.ID
	case domain.KindRead:
		return "the read rule " + d.By.ID
	case domain.KindOwnSubagent:
		return "delegation to the agent's own subagent"
	case domain.KindGrant:
		return "the kept grant " + d.By.ID
	case domain.KindRule:
		if d.QuotedRule != "" {
			return fmt.Sprintf("the rule %q", d.QuotedRule)
		}
		return "the rule " + d.By.ID
	}
	return strings.TrimSpace(d.By.Kind + " " + d.By.ID)
}

func note(d *domain.Decision) string {
	if d == nil || d.Note == "" {
		return ""
	}
	return fmt.Sprintf(" with the note %q", d.Note)
}

func expiredAt(r *domain.Request) string {
	if r == nil || r.DeadlineAt.IsZero() {
		return ""
	}
	return " before its deadline " + r.DeadlineAt.UTC().Format(time.RFC3339)
}

func approvalExpiry(d *domain.Decision) string {
	if d == nil || d.ExpiresAt == nil {
		return ""
	}
	return " at " + d.ExpiresAt.UTC().Format(time.RFC3339)
}

func (o Outcome) cancelled() string {
	if !errors.Is(o.Err, ErrAbandoned) {
		return "countersign: the request" + o.ref() + " was cancelled by its requester before the call ran" +
			"; nobody denied the call, and it did not run"
	}
	s := "countersign: the call was abandoned before it ran" + o.ref()
	if o.Request != nil && o.Request.Status == domain.StatusCancelled {
		s += ", and its request was cancelled"
	}
	return s + "; nobody denied the call"
}

// cause words err without the package prefix.
func cause(err error) string {
	if err == nil {
		return "no valid decision"
	}
	return strings.ReplaceAll(err.Error(), "adapter: ", "")
}
