package approvals

import (
	"context"
	"net/http"
	"strconv"

	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/domain"
)

// listInput is list's body: GET /v1/requests' query as fields.
type listInput struct {
	Status string `json:"status,omitempty"`
	Agent  string `json:"agent,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// query is the body as a query's parameters.
func (l *listInput) query() map[string]string {
	return map[string]string{"status": l.Status, "agent": l.Agent, "limit": limitString(l.Limit), "cursor": l.Cursor}
}

func runList(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	q, err := in.params(&listInput{})
	if err != nil {
		return Result{}, err
	}
	f, err := ParseListFilter(q["status"], q["agent"], q["limit"], q["cursor"])
	if err != nil {
		return Result{}, err
	}
	items, next, err := s.List(ctx, c, f)
	if err != nil {
		return Result{}, err
	}
	p, err := wire.RequestPage(items, next)
	return okBody(http.StatusOK, p, err)
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

func (g *grantsInput) query() map[string]string {
	return map[string]string{"agent": g.Agent, "effect": g.Effect, "scope": g.Scope,
		"revoked": strconv.FormatBool(g.Revoked), "limit": limitString(g.Limit), "cursor": g.Cursor}
}

func runGrants(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	q, err := in.params(&grantsInput{})
	if err != nil {
		return Result{}, err
	}
	f, err := ParseGrantFilter(q["agent"], q["effect"], q["scope"], q["revoked"], q["limit"], q["cursor"])
	if err != nil {
		return Result{}, err
	}
	items, next := s.ListGrants(ctx, c, f)
	p, err := wire.GrantPage(items, next)
	return okBody(http.StatusOK, p, err)
}

// querier is a read's body, which gives the same parameters as its query.
type querier interface{ query() map[string]string }

// params is a read's parameters: the query when the surface gives one
// (HTTP), else the body's fields (the bus), decoded strictly.
func (in Input) params(body querier) (map[string]string, error) {
	if in.Query != nil {
		return in.Query()
	}
	if _, err := in.body(body, true); err != nil {
		return nil, err
	}
	return body.query(), nil
}

// limitString gives a JSON limit to the query parser ("" when absent).
func limitString(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

func runRegisterAgent(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	var body RegisterInput
	if _, err := in.body(&body, true); err != nil {
		return Result{}, err
	}
	agent, token, err := s.RegisterAgent(ctx, c, body)
	agent.TokenSHA256 = ""
	return okBody(http.StatusCreated, Registered{Agent: agent, Token: token}, err)
}

// Registered is the answer of register_agent; the token is shown once.
type Registered struct {
	Agent domain.Agent `json:"agent"`
	Token string       `json:"token"`
}

func runRetireAgent(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	agent, err := s.RetireAgent(ctx, c, domain.AgentID(in.Path["id"]))
	agent.TokenSHA256 = ""
	return okBody(http.StatusOK, agent, err)
}

func runRules(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	rules, err := s.ListRules(ctx, c, domain.AgentID(in.Path["id"]))
	return okBody(http.StatusOK, map[string]any{"items": rules}, err)
}

func runAddRule(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	var body RuleInput
	if _, err := in.body(&body, false); err != nil {
		return Result{}, err
	}
	rule, err := s.AddRule(ctx, c, domain.AgentID(in.Path["id"]), body)
	return okBody(http.StatusCreated, rule, err)
}

func runDeleteRule(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	err := s.DeleteRule(ctx, c, domain.AgentID(in.Path["id"]), domain.RuleID(in.Path["rule_id"]))
	return okBody(http.StatusNoContent, nil, err)
}

func runEndDelegation(s *Service, ctx context.Context, c Caller, in Input) (Result, error) {
	d, err := s.EndDelegation(ctx, c, domain.AgentID(in.Path["id"]), in.Path["session"])
	return okBody(http.StatusOK, d, err)
}
