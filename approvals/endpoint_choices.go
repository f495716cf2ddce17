package approvals

import (
	"fmt"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
)

// Choice is one answer a caller may give a request's current
// requirement: what it answers (decision and scope, as an answer's body)
// and how a surface shows it. The server builds them; clients never build
// their own.
type Choice struct {
	ChoiceID       string `json:"choiceId"`
	Label          string `json:"label"`
	Decision       string `json:"decision"`
	Scope          string `json:"scope"`
	RequiresReason bool   `json:"requiresReason"`
}

// The choices there are.
var (
	allowOnce      = Choice{"allow_once", "Allow once", DecisionAllow, domain.ScopeOnce, false}
	allowSession   = Choice{"allow_session", "Allow for this session", DecisionAllow, domain.ScopeSession, false}
	allowAlways    = Choice{"allow_always", "Always allow", DecisionAllow, domain.ScopeLifetime, false}
	denyOnce       = Choice{"deny", "Deny", DecisionDeny, domain.ScopeOnce, false}
	denyWithReason = Choice{"deny_with_reason", "Deny with reason", DecisionDeny, domain.ScopeOnce, true}
	reject         = Choice{"deny", "Reject", DecisionDeny, domain.ScopeOnce, false}
)

// KnownChoice returns the choice an id names, whoever may give it.
func KnownChoice(id string) (Choice, bool) {
	return OfferedChoice([]Choice{allowOnce, allowSession, allowAlways, denyOnce, denyWithReason}, id)
}

// OfferedChoice returns the choice of list with this id.
func OfferedChoice(list []Choice, id string) (Choice, bool) {
	for _, c := range list {
		if c.ChoiceID == id {
			return c, true
		}
	}
	return Choice{}, false
}

// Choices returns what c may answer r's current requirement with, the
// one statement of it for every surface: nothing unless c is its current
// approver and may answer (Permit of OpAnswer); allow once and reject on
// a protected write; otherwise the allows up to the largest scope c may
// give (maxAllow), allow for this session only on a request with a
// session, then deny and deny with reason.
func (s *Service) Choices(c Caller, r *domain.Request) []Choice {
	if r.Status.Terminal() || !c.Tenant.MayAnswer(r, c.Principal) || Permit(c, OpAnswer) != nil {
		return []Choice{}
	}
	if r.Subject.ProtectedWrite {
		return []Choice{allowOnce, reject}
	}
	out := []Choice{}
	switch max := s.maxAllow(c, r); {
	case max == domain.ScopeLifetime:
		out = append(out, allowOnce, allowSession, allowAlways)
	case max == domain.ScopeSession:
		out = append(out, allowOnce, allowSession)
	case max == domain.ScopeOnce:
		out = append(out, allowOnce)
	}
	if r.Session == "" && len(out) > 1 {
		out = append(out[:1], out[2:]...) // no session: no allow_session
	}
	return append(withGrant(r, out), denyOnce, denyWithReason)
}

// withGrant says on a shell request's lasting allows which grant they
// leave for the current stage: "Allow for this session: any `git push …`"
// or "…: exactly this command" (GrantText).
func withGrant(r *domain.Request, list []Choice) []Choice {
	if r.Subject.Kind != domain.SubjectShell || r.CurrentStage >= len(r.Stages) {
		return list
	}
	st := r.Stages[r.CurrentStage]
	text := st.Grant
	if text == "" {
		text = GrantText(&st)
	}
	for i, c := range list {
		if c.Scope == domain.ScopeSession || c.Scope == domain.ScopeLifetime {
			list[i].Label = c.Label + ": " + text
		}
	}
	return list
}

// maxAllow is the largest scope of an allow c may give r ("" for none):
// a person who holds, the scope of the grant by which an agent holds
// (SPEC §3); an agent that does not hold endorses, which takes no scope
// (once); a person who does not hold cannot allow. An unknown subject
// kind is answered once only.
func (s *Service) maxAllow(c Caller, r *domain.Request) string {
	holds, max := s.Holds(c, r)
	switch {
	case !holds && c.Principal.Kind != domain.KindAgent:
		return ""
	case !holds, onceOnly(r) != "":
		return domain.ScopeOnce
	}
	return max
}

// onceOnly says why r may only be answered with scope once ("" when it
// may be answered with any): a subject kind countersign does not know, or
// a protected write (SPEC §8). Choices offers no larger scope, and Answer
// refuses one, in these words.
func onceOnly(r *domain.Request) string {
	switch {
	case !deciders.KnownSubject(r.Subject.Kind):
		return fmt.Sprintf("a %q subject may only be answered once", r.Subject.Kind)
	case r.Subject.ProtectedWrite:
		return "a protected write may only be answered once"
	}
	return ""
}
