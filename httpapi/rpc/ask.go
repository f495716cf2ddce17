package rpc

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
)

// maxAsks bounds the approval/request calls one connection leaves
// unanswered; beyond it a requirement is shown as approval/requested.
const maxAsks = 1024

// ask is an approval/request sent and not yet answered: the requirement
// the client's result decides.
type ask struct {
	approvalID  string
	requirement RequirementID
}

// ServerRequest is a JSON-RPC 2.0 request from the server
// (approval/request).
type ServerRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// AskResult is the client's result to approval/request: the choice it
// makes for the requirement the request named, and a reason where the
// choice requires one.
type AskResult struct {
	ChoiceID string `json:"choiceId"`
	Reason   string `json:"reason,omitempty"`
}

// ask sends p as approval/request and remembers its requirement (showMu
// held).
func (c *conn) ask(p RequestParams) {
	c.nextAsk++
	id := "approval-" + strconv.Itoa(c.nextAsk)
	c.asks[id] = ask{approvalID: p.ApprovalID, requirement: p.CurrentRequirementID}
	c.send(ServerRequest{JSONRPC: "2.0", ID: id, Method: MethodRequest, Params: p})
}

// forgetAsks drops the unanswered approval/request calls about r whose
// requirement an answer no longer decides (showMu held): every one once
// r ended, those of an earlier stage, or of a revision r moved on from
// other than by others' approvals. A late result of one decides nothing.
func (c *conn) forgetAsks(r *domain.Request) {
	for k, a := range c.asks {
		if a.approvalID != string(r.ID) {
			continue
		}
		if r.Status.Terminal() || a.requirement.SourceIndex != currentStage(r) || !approvals.AnswerableAt(r, a.requirement.Revision) {
			delete(c.asks, k)
		}
	}
}

// answered applies the client's response to an approval/request: a
// result {"choiceId", "reason"?} is approval/decide on the requirement
// the request named; an error response decides nothing (the request
// keeps waiting). A response to no request of this connection, or one
// the decision refuses (a stale requirement, a choice not offered), is
// logged and changes nothing: the client learns the outcome from the
// notifications that follow.
func (c *conn) answered(r *ClientResponse) {
	var id string
	if json.Unmarshal(r.ID, &id) != nil {
		return
	}
	c.showMu.Lock()
	a, ok := c.asks[id]
	delete(c.asks, id)
	c.showMu.Unlock()
	if !ok || r.Error != nil {
		return
	}
	var res AskResult
	if err := decodeParams(r.Result, &res); err != nil || bytes.Equal(bytes.TrimSpace(r.Result), []byte("null")) {
		c.h.cfg.Logger.Info("rpc: approval/request result refused", "approval", a.approvalID, "err", err)
		return
	}
	req := a.requirement
	p := decideParams{ApprovalID: a.approvalID, RequirementID: &requirement{SourceIndex: &req.SourceIndex, Revision: &req.Revision},
		ChoiceID: res.ChoiceID, Reason: res.Reason}
	if _, _, err := c.answer(func() (*decideParams, error) { return &p, nil }); err != nil {
		c.h.cfg.Logger.Info("rpc: approval/request result refused", "approval", a.approvalID, "err", err)
	}
}
