package approvals

import (
	"context"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// Op names one operation of the API. Every surface (HTTP, the bus,
// JSON-RPC, decision links, Slack) translates its own call into an Op and
// runs its Endpoint (endpoint.go), which asks Permit before it reads
// anything else; a stream (events, watch, audit, config, people,
// discover) is served after Admit. So the scope and principal kind an
// operation takes are written once, here, and no surface has a copy.
type Op string

// The operations (SPEC §5, §8, §9).
const (
	OpSubmit        Op = "submit"         // POST /v1/requests, api.submit
	OpGet           Op = "get"            // GET /v1/requests/{id}, api.get
	OpList          Op = "list"           // GET /v1/requests, api.list
	OpAnswer        Op = "answer"         // POST /v1/requests/{id}, api.answer, approval/decide
	OpCancel        Op = "cancel"         // POST /v1/requests/{id}/cancel, /v1/turns/{turn}/cancel, api.cancel
	OpClaim         Op = "claim"          // POST /v1/requests/{id}/claim, api.claim
	OpGrants        Op = "grants"         // GET /v1/grants, api.grants
	OpRevoke        Op = "revoke"         // DELETE /v1/grants/{id}, api.revoke
	OpRules         Op = "rules"          // GET /v1/agents/{id}/rules
	OpAddRule       Op = "add_rule"       // POST /v1/agents/{id}/rules
	OpDeleteRule    Op = "delete_rule"    // DELETE /v1/agents/{id}/rules/{rule_id}
	OpRegisterAgent Op = "register_agent" // POST /v1/agents
	OpRetireAgent   Op = "retire_agent"   // DELETE /v1/agents/{id}
	OpEndDelegation Op = "end_delegation" // DELETE /v1/agents/{id}/delegations/{session}
	OpEvents        Op = "events"         // GET /v1/events
	OpWatch         Op = "watch"          // GET /v1/rpc: a live approver's connection
	OpConfig        Op = "config"         // GET /v1/config
	OpDiscover      Op = "discover"       // $SRV.> on the bus (nats micro ls, stats)
	OpAudit         Op = "audit"          // GET /v1/audit, /v1/audit/checkpoint, /key, /proof
	OpPeople        Op = "people"         // GET /v1/people
)

// policy is what an operation asks of its caller before anything else:
// a scope ("" for any valid token) and a principal kind ("" for any).
type policy struct {
	scope string
	kind  string
}

// policies is the one table of SPEC §5's scope column. An Op missing here
// is refused on every surface: a surface never runs an operation open.
var policies = map[Op]policy{
	OpSubmit:        {domain.ScopeRequestsWrite, domain.KindAgent},
	OpGet:           {"", ""},
	OpList:          {domain.ScopeApprovalsRead, ""},
	OpAnswer:        {domain.ScopeApprovalsWrite, ""},
	OpCancel:        {domain.ScopeRequestsWrite, domain.KindAgent},
	OpClaim:         {domain.ScopeRequestsWrite, domain.KindAgent},
	OpGrants:        {domain.ScopeApprovalsRead, ""},
	OpRevoke:        {domain.ScopeApprovalsWrite, ""},
	OpRules:         {domain.ScopeApprovalsRead, ""},
	OpAddRule:       {domain.ScopeApprovalsWrite, ""},
	OpDeleteRule:    {domain.ScopeApprovalsWrite, ""},
	OpRegisterAgent: {domain.ScopeRequestsWrite, domain.KindAgent},
	OpRetireAgent:   {domain.ScopeApprovalsWrite, ""},
	OpEndDelegation: {domain.ScopeRequestsWrite, ""},
	OpEvents:        {domain.ScopeApprovalsRead, ""},
	OpWatch:         {domain.ScopeApprovalsRead, ""},
	OpConfig:        {domain.ScopeAdmin, ""},
	OpDiscover:      {domain.ScopeAdmin, ""},
	OpAudit:         {domain.ScopeAdmin, ""},
	OpPeople:        {domain.ScopeApprovalsRead, ""},
}

// errNoPolicy refuses an operation missing from policies.
var errNoPolicy = forbid("this operation is not offered")

// Permit reports whether c may run op: nil, or ErrForbidden (403) when its
// token lacks op's scope (checked first) or its principal is not of op's
// kind (agent-only: submit, cancel, claim, register_agent; a person-only
// operation names domain.KindPerson).
func Permit(c Caller, op Op) error {
	p, ok := policies[op]
	switch {
	case !ok:
		return errNoPolicy
	case p.scope != "" && !c.Token.Has(p.scope):
		return forbid("this token lacks the " + p.scope + " scope")
	case p.kind != "" && c.Principal.Kind != p.kind:
		return forbid("only " + p.kind + " principals may do this")
	}
	return nil
}

// Admit is Authenticate and then Permit, for the operations a surface
// serves itself (streams: OpEvents, OpWatch, OpAudit, OpConfig,
// OpPeople, OpDiscover): the caller of op, or ErrUnauthenticated (401),
// then ErrForbidden (403). sessions is as Authenticate's.
func (s *Service) Admit(authorization string, op Op, sessions Sessions) (Caller, error) {
	c, err := s.Authenticate(authorization, sessions)
	if err != nil {
		return c, err
	}
	return c, Permit(c, op)
}

// WithTraceparent carries a W3C traceparent (a submit's traceparent
// header, on any surface) into the events of the writes made under ctx
// when it is a valid trace context of version 00; anything else is
// ignored, as W3C says, never an error (SPEC §5).
func WithTraceparent(ctx context.Context, tp string) context.Context {
	if !validTraceparent(tp) {
		return ctx
	}
	return kvstate.WithTraceparent(ctx, tp)
}

// validTraceparent accepts version 00 of W3C Trace Context:
// 00-<32 hex trace id, not all zero>-<16 hex parent id, not all zero>-<2
// hex flags>, lowercase.
func validTraceparent(tp string) bool {
	if len(tp) != 55 || tp[:3] != "00-" || tp[35] != '-' || tp[52] != '-' {
		return false
	}
	trace, parent, flags := tp[3:35], tp[36:52], tp[53:]
	return lowerHex(trace) && lowerHex(parent) && lowerHex(flags) && !allZero(trace) && !allZero(parent)
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
