package busapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/problem"
	"github.com/nats-io/nats.go/micro"
)

// message is what an operation reads of a request.
type message struct {
	data    []byte
	headers micro.Headers
}

// op is one endpoint: the operation whose policy approvals.Permit checks
// and its run, which decodes, makes the one use-case call its HTTP
// endpoint makes, and returns the HTTP status and body.
type op struct {
	op  approvals.Op
	run func(ctx context.Context, c approvals.Caller, m message) (int, any, error)
}

// header is the first value of a header, its name matched in any case as
// in HTTP (NATS headers are case-sensitive; clients differ).
func header(h micro.Headers, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

func (s *Server) table() map[string]op {
	return map[string]op{
		events.OpSubmit: {approvals.OpSubmit, s.submit},
		events.OpGet:    {approvals.OpGet, s.get},
		events.OpList:   {approvals.OpList, s.list},
		events.OpAnswer: {approvals.OpAnswer, s.answer},
		events.OpCancel: {approvals.OpCancel, s.cancel},
		events.OpClaim:  {approvals.OpClaim, s.claim},
		events.OpGrants: {approvals.OpGrants, s.grants},
		events.OpRevoke: {approvals.OpRevoke, s.revoke},
	}
}

// target is the "id" every operation on one request or grant adds to the
// HTTP body.
type target struct {
	ID string `json:"id"`
}

func (t target) required() error {
	if t.ID == "" {
		return problem.Invalid("id", "id is required")
	}
	return nil
}

// decodeTarget decodes a body whose id is required.
func decodeTarget[T interface{ required() error }](m message, v T) error {
	if _, err := approvals.Decode(m.data, v); err != nil {
		return err
	}
	return v.required()
}

func (s *Server) submit(ctx context.Context, c approvals.Caller, m message) (int, any, error) {
	var in approvals.SubmitInput
	digest, err := approvals.Decode(m.data, &in)
	if err != nil {
		return 0, nil, err
	}
	ctx = approvals.WithTraceparent(ctx, header(m.headers, "traceparent"))
	rec, created, err := s.svc.Submit(ctx, c, in, header(m.headers, "Idempotency-Key"), digest)
	if err != nil {
		return 0, nil, err
	}
	if created {
		return http.StatusCreated, rec.Request, nil
	}
	return http.StatusOK, rec.Request, nil
}

// getInput is get's body: the request and an optional wait (as ?wait=).
type getInput struct {
	target
	Wait string `json:"wait,omitempty"`
}

func (s *Server) get(ctx context.Context, c approvals.Caller, m message) (int, any, error) {
	var in getInput
	if err := decodeTarget(m, &in); err != nil {
		return 0, nil, err
	}
	wait, err := approvals.ParseWait(in.Wait)
	if err != nil {
		return 0, nil, err
	}
	id := events.RequestID(in.ID)
	if wait <= 0 {
		rec, err := s.svc.Get(ctx, c, id)
		return http.StatusOK, rec.Request, err
	}
	rec, err := s.svc.Wait(ctx, c, id, wait)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &rec.Request, nil
}

// listInput is list's body: GET /v1/requests' query as fields.
type listInput struct {
	Status string `json:"status,omitempty"`
	Agent  string `json:"agent,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

func (s *Server) list(ctx context.Context, c approvals.Caller, m message) (int, any, error) {
	var in listInput
	if err := approvals.DecodeOptional(m.data, &in); err != nil {
		return 0, nil, err
	}
	f, err := approvals.ParseListFilter(in.Status, in.Agent, limitString(in.Limit), in.Cursor)
	if err != nil {
		return 0, nil, err
	}
	items, next, err := s.svc.List(ctx, c, f)
	if err != nil {
		return 0, nil, err
	}
	p, err := approvals.RequestPage(items, next)
	return http.StatusOK, p, err
}

// limitString gives a JSON limit to the query parser ("" when absent).
func limitString(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

// answerInput is answer's body: POST /v1/requests/{id}'s and the id.
type answerInput struct {
	target
	approvals.AnswerInput
}

func (s *Server) answer(ctx context.Context, c approvals.Caller, m message) (int, any, error) {
	var in answerInput
	if err := decodeTarget(m, &in); err != nil {
		return 0, nil, err
	}
	rec, err := s.svc.Answer(ctx, c, events.RequestID(in.ID), in.AnswerInput)
	return http.StatusOK, rec.Request, err
}

// cancelInput is cancel's body: one request's id, or a turn whose pending
// requests all end (POST /v1/turns/{turn}/cancel's twin).
type cancelInput struct {
	ID   string `json:"id"`
	Turn string `json:"turn"`
}

func (s *Server) cancel(ctx context.Context, c approvals.Caller, m message) (int, any, error) {
	var in cancelInput
	if _, err := approvals.Decode(m.data, &in); err != nil {
		return 0, nil, err
	}
	switch {
	case in.ID != "" && in.Turn != "":
		return 0, nil, problem.Invalid("turn", "give id or turn, not both")
	case in.Turn != "":
		ids, err := s.svc.CancelTurn(ctx, c, in.Turn)
		return http.StatusOK, approvals.TurnCancelled{Cancelled: ids}, err
	case in.ID == "":
		return 0, nil, problem.Invalid("id", "id or turn is required")
	}
	rec, err := s.svc.Cancel(ctx, c, events.RequestID(in.ID))
	return http.StatusOK, rec.Request, err
}

// claimInput is claim's body: POST /v1/requests/{id}/claim's and the id.
type claimInput struct {
	target
	CallDigest string `json:"call_digest"`
}

func (s *Server) claim(ctx context.Context, c approvals.Caller, m message) (int, any, error) {
	var in claimInput
	if err := decodeTarget(m, &in); err != nil {
		return 0, nil, err
	}
	rec, err := s.svc.Claim(ctx, c, events.RequestID(in.ID), in.CallDigest)
	return http.StatusOK, rec.Request, err
}

// grantsInput is grants' body: GET /v1/grants' query as fields.
type grantsInput struct {
	Agent   string `json:"agent,omitempty"`
	Effect  string `json:"effect,omitempty"`
	Scope   string `json:"scope,omitempty"`
	Revoked bool   `json:"revoked,omitempty"`
	Limit   *int   `json:"limit,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
}

func (s *Server) grants(ctx context.Context, c approvals.Caller, m message) (int, any, error) {
	var in grantsInput
	if err := approvals.DecodeOptional(m.data, &in); err != nil {
		return 0, nil, err
	}
	f, err := approvals.ParseGrantFilter(in.Agent, in.Effect, in.Scope, strconv.FormatBool(in.Revoked), limitString(in.Limit), in.Cursor)
	if err != nil {
		return 0, nil, err
	}
	items, next := s.svc.ListGrants(ctx, c, f)
	p, err := approvals.GrantPage(items, next)
	return http.StatusOK, p, err
}

func (s *Server) revoke(ctx context.Context, c approvals.Caller, m message) (int, any, error) {
	var in target
	if err := decodeTarget(m, &in); err != nil {
		return 0, nil, err
	}
	g, err := s.svc.RevokeGrant(ctx, c, events.GrantID(in.ID))
	return http.StatusOK, g, err
}
