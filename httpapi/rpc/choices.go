package rpc

import (
	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/events"
)

// Choice is one entry of availableChoices: what a decide with its
// ChoiceID answers (decision and scope, as POST /v1/requests/{id}).
type Choice struct {
	ChoiceID       string `json:"choiceId"`
	Label          string `json:"label"`
	Decision       string `json:"decision"`
	Scope          string `json:"scope"`
	RequiresReason bool   `json:"requiresReason"`
}

// The choices the server builds; clients never build their own.
var (
	allowOnce      = Choice{"allow_once", "Allow once", approvals.DecisionAllow, events.ScopeOnce, false}
	allowSession   = Choice{"allow_session", "Allow for this session", approvals.DecisionAllow, events.ScopeSession, false}
	allowAlways    = Choice{"allow_always", "Always allow", approvals.DecisionAllow, events.ScopeLifetime, false}
	deny           = Choice{"deny", "Deny", approvals.DecisionDeny, events.ScopeOnce, false}
	denyWithReason = Choice{"deny_with_reason", "Deny with reason", approvals.DecisionDeny, events.ScopeOnce, true}
	reject         = Choice{"deny", "Reject", approvals.DecisionDeny, events.ScopeOnce, false}
)

// knownChoice returns the choice a choiceId names, whoever may give it.
func knownChoice(id string) (Choice, bool) {
	return offered([]Choice{allowOnce, allowSession, allowAlways, deny, denyWithReason}, id)
}

// choices returns what caller c may answer r's current requirement with:
// nothing unless c is its current approver and may answer (Permit); allow
// once and reject on a protected write; otherwise the allows up to the
// largest scope c may give (maxAllow), then deny and deny with reason.
func choices(svc *approvals.Service, c approvals.Caller, r *events.Request) []Choice {
	if r.Status.Terminal() || !c.Tenant.MayAnswer(r, c.Principal) || approvals.Permit(c, approvals.OpAnswer) != nil {
		return []Choice{}
	}
	if protectedWrite(r) {
		return []Choice{allowOnce, reject}
	}
	out := []Choice{}
	switch max := maxAllow(svc, c, r); {
	case max == events.ScopeLifetime:
		out = append(out, allowOnce, allowSession, allowAlways)
	case max == events.ScopeSession:
		out = append(out, allowOnce, allowSession)
	case max == events.ScopeOnce:
		out = append(out, allowOnce)
	}
	if r.Session == "" && len(out) > 1 {
		out = append(out[:1], out[2:]...) // no session: no allow_session
	}
	return append(withGrant(r, out), deny, denyWithReason)
}

// withGrant says on a shell request's lasting allows which grant they
// leave for the current stage: "Allow for this session: any `git push …`"
// or "…: exactly this command" (approvals.GrantText).
func withGrant(r *events.Request, list []Choice) []Choice {
	if r.Subject.Kind != events.SubjectShell || r.CurrentStage >= len(r.Stages) {
		return list
	}
	st := r.Stages[r.CurrentStage]
	text := st.Grant
	if text == "" {
		text = approvals.GrantText(&st)
	}
	for i, c := range list {
		if c.Scope == events.ScopeSession || c.Scope == events.ScopeLifetime {
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
func maxAllow(svc *approvals.Service, c approvals.Caller, r *events.Request) string {
	holds, max := svc.Holds(c, r)
	switch {
	case !holds && c.Principal.Kind != events.KindAgent:
		return ""
	case !holds, !deciders.KnownSubject(r.Subject.Kind):
		return events.ScopeOnce
	}
	return max
}

// offered returns the choice of list with this id.
func offered(list []Choice, id string) (Choice, bool) {
	for _, c := range list {
		if c.ChoiceID == id {
			return c, true
		}
	}
	return Choice{}, false
}
