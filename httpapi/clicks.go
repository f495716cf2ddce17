package httpapi

import (
	"context"
	"encoding/json"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// The surfaces where a person answers with a click (decision links,
// Slack buttons) prove who clicked their own way (the link's MAC, Slack's
// signature and slack_user_id) and then bind to the same endpoints as
// every other surface: the click maps onto the answer's body, here, in
// one place, and the endpoint's Permit, strict decode and use case do the
// rest.

// click is a person's answer by a click: scope once, at the revision the
// click showed, with the surface's reason.
func click(rev uint64, decision, reason string) approvals.AnswerInput {
	return approvals.AnswerInput{Expected: &rev, Decision: decision, Scope: domain.ScopeOnce, Reason: reason}
}

// answerAs answers request id as caller through the answer's endpoint.
func (a *API) answerAs(ctx context.Context, caller approvals.Caller, id domain.RequestID, in approvals.AnswerInput) (kvstate.Record, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return kvstate.Record{}, err
	}
	res, err := a.svc.Endpoint(approvals.OpAnswer)(ctx, caller, approvals.Input{Path: map[string]string{"id": string(id)},
		Body: func() ([]byte, error) { return body, nil }})
	return res.Record, err
}

// getAs reads request id as caller through the get endpoint.
func (a *API) getAs(ctx context.Context, caller approvals.Caller, id domain.RequestID) (kvstate.Record, error) {
	res, err := a.svc.Endpoint(approvals.OpGet)(ctx, caller, approvals.Input{Path: map[string]string{"id": string(id)}})
	return res.Record, err
}
