package rpc

import (
	"encoding/json"
	"strings"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/problem"
)

type decideParams struct {
	ApprovalID    string           `json:"approvalId"`
	RequirementID *requirement     `json:"requirementId"`
	ChoiceID      string           `json:"choiceId"`
	Reason        string           `json:"reason,omitempty"`
	Rule          string           `json:"rule,omitempty"`
	choice        approvals.Choice // the choice ChoiceID names (set by validate)

	// Arguments, with choice allow_once, approves with edits (SPEC §5).
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type requirement struct {
	SourceIndex *int    `json:"sourceIndex"`
	Revision    *uint64 `json:"revision"`
}

func (p *decideParams) validate() error {
	var ok bool
	p.choice, ok = approvals.KnownChoice(p.ChoiceID)
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

// decide answers a requirement with a choice through the answer's
// endpoint (approvals.Service.Endpoint(OpAnswer), as POST
// /v1/requests/{id}, with expected = the requirement's revision), so the
// same permit, compare-and-set, events and errors. In SPEC §5's order:
// approvals:write (403, the endpoint's Permit), the params (400), the
// request (404), then, while the caller is its current approver, a stale
// requirement (409), a choice not offered (400), a missing reason (400);
// then Answer's own rules (a protected write nobody watches: 409, on
// every surface).
func (c *conn) decide(raw json.RawMessage) (any, func(), error) {
	return c.answer(func() (*decideParams, error) {
		var p decideParams
		return &p, decodeParams(raw, &p)
	})
}

// answer runs a decision whose params read reads after the endpoint's
// Permit (approval/decide's, or the result of an approval/request).
func (c *conn) answer(read func() (*decideParams, error)) (any, func(), error) {
	var p *decideParams
	res, err := c.h.svc.Endpoint(approvals.OpAnswer)(c.ctx, c.caller, approvals.Input{Body: func() ([]byte, error) {
		var err error
		if p, err = read(); err != nil {
			return nil, err
		}
		return c.body(p)
	}})
	if err != nil {
		return nil, nil, err
	}
	return DecideResult{ApprovalID: p.ApprovalID, Status: string(res.Record.Status), Revision: res.Record.Revision}, nil, nil
}

// body maps a decision onto the answer's body, once its params and the
// request allow it (decidable).
func (c *conn) body(p *decideParams) ([]byte, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	got, err := c.h.svc.Endpoint(approvals.OpGet)(c.ctx, c.caller, approvals.Input{Path: map[string]string{"id": p.ApprovalID}})
	if err != nil {
		return nil, err
	}
	if err := c.decidable(&got.Record, p); err != nil {
		return nil, err
	}
	return json.Marshal(answerBody{ID: p.ApprovalID, AnswerInput: approvals.AnswerInput{Expected: p.RequirementID.Revision,
		Decision: p.choice.Decision, Scope: p.choice.Scope, Reason: p.Reason, Rule: p.Rule, Arguments: p.Arguments}})
}

// answerBody is the answer endpoint's body as the bus gives it: the id
// beside the answer.
type answerBody struct {
	ID string `json:"id"`
	approvals.AnswerInput
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
	ch, ok := approvals.OfferedChoice(c.h.svc.Choices(c.caller, r), p.ChoiceID)
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
