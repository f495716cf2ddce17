package rpc

import (
	"encoding/json"
	"strings"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/problem"
)

type decideParams struct {
	ApprovalID    string       `json:"approvalId"`
	RequirementID *requirement `json:"requirementId"`
	ChoiceID      string       `json:"choiceId"`
	Reason        string       `json:"reason,omitempty"`
	Rule          string       `json:"rule,omitempty"`
	choice        Choice       // the choice ChoiceID names (set by validate)

	// Arguments, with choice allow_once, approves with edits (SPEC §5).
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type requirement struct {
	SourceIndex *int    `json:"sourceIndex"`
	Revision    *uint64 `json:"revision"`
}

func (p *decideParams) validate() error {
	var ok bool
	p.choice, ok = knownChoice(p.ChoiceID)
	switch {
	case p.ApprovalID == "":
		return problem.Invalid("approvalId", "approvalId is required")
	case p.RequirementID == nil || p.RequirementID.SourceIndex == nil || p.RequirementID.Revision == nil:
		return problem.Invalid("requirementId", "requirementId {sourceIndex, revision} is required, as currentRequirementId gave it")
	case !ok:
		return problem.Invalid("choiceId", "unknown choiceId "+jsonString(p.ChoiceID))
	}
	return nil
}

// DecideResult is the result of approval/decide: the request after the
// answer (still pending when it went up the chain or to the next stage).
type DecideResult struct {
	ApprovalID string `json:"approvalId"`
	Status     string `json:"status"`
	Revision   uint64 `json:"revision"`
}

// decide answers a requirement with a choice: the same use case as POST
// /v1/requests/{id} (approvals.Service.Answer, with expected = the
// requirement's revision), so the same compare-and-set, events and
// errors. Checked first, in SPEC §5's order: approvals:write (403), the
// params (400), the request (404), then, while the caller is its current
// approver, a stale requirement (409), a choice not offered (400), a
// missing reason (400); then Answer's own rules (a protected write
// nobody watches: 409, on every surface).
func (c *conn) decide(raw json.RawMessage) (any, func(), error) {
	if err := approvals.Permit(c.caller, approvals.OpAnswer); err != nil {
		return nil, nil, err
	}
	var p decideParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, nil, err
	}
	return c.apply(&p)
}

// apply runs a decision whose params were read (approval/decide's, or
// the result of an approval/request).
func (c *conn) apply(p *decideParams) (any, func(), error) {
	if err := p.validate(); err != nil {
		return nil, nil, err
	}
	id := events.RequestID(p.ApprovalID)
	rec, err := c.h.svc.Get(c.ctx, c.caller, id)
	if err != nil {
		return nil, nil, err
	}
	if err := c.decidable(&rec, p); err != nil {
		return nil, nil, err
	}
	in := approvals.AnswerInput{Expected: p.RequirementID.Revision, Decision: p.choice.Decision,
		Scope: p.choice.Scope, Reason: p.Reason, Rule: p.Rule, Arguments: p.Arguments}
	rec, err = c.h.svc.Answer(c.ctx, c.caller, id, in)
	if err != nil {
		return nil, nil, err
	}
	return DecideResult{ApprovalID: p.ApprovalID, Status: string(rec.Status), Revision: rec.Revision}, nil, nil
}

// decidable checks what only this surface knows. A caller who is not the
// current approver, or a terminal request, goes on to Answer as over
// HTTP: a safe repeat is 200, anything else 409. A requirement at a
// revision the request no longer takes (anything but others' approvals
// came since, SPEC §12) is refused in the HTTP API's words; one naming
// another stage at a revision it takes, in this surface's.
func (c *conn) decidable(rec *kvstate.Record, p *decideParams) error {
	r := &rec.Request
	if r.Status.Terminal() || !c.caller.Tenant.MayAnswer(r, c.caller.Principal) {
		return nil
	}
	if rev := *p.RequirementID.Revision; !approvals.AnswerableAt(r, rev) {
		return approvals.Stale(r, rev) // the HTTP API's words (SPEC §12)
	}
	if *p.RequirementID.SourceIndex != currentStage(r) {
		return errStale
	}
	ch, ok := offered(choices(c.h.svc, c.caller, r), p.ChoiceID)
	switch {
	case !ok:
		return errNotOffered
	case ch.RequiresReason && strings.TrimSpace(p.Reason) == "":
		return errNeedsReason
	}
	return nil
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
