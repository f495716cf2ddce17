package approvals

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// RegisterInput is the body of POST /v1/agents.
type RegisterInput struct {
	Role          string           `json:"role,omitempty"`
	Brief         string           `json:"brief,omitempty"`
	Memory        string           `json:"memory,omitempty"`
	ReviewTimeout string           `json:"review_timeout,omitempty"`
	RequestID     domain.RequestID `json:"request_id,omitempty"`
}

// spawnCapability is what registering a subagent exercises.
var spawnCapability = domain.Capability{Action: domain.ActionAgentsSpawn, Target: "*"}

// RegisterAgent registers a subagent of the calling agent (SPEC §5): the
// spawn is allowed by steps 1–3 for agents.spawn:*, or by the caller's
// approved, unclaimed spawn request named in RequestID, which this claims.
// It returns the agent and its token (shown once; stored hashed). The
// subagent gets no grant and no rule: nothing its parent does not hold.
// Errors: InvalidRequest, ErrForbidden, ErrNotFound, ErrConflict (a refused
// claim, with its reason). Surfaces come through
// Endpoint(OpRegisterAgent), whose Permit admits agents only.
func (s *Service) RegisterAgent(ctx context.Context, c Caller, in RegisterInput) (domain.Agent, string, error) {
	parent, ok := s.views.Agent(c.Tenant.ID, domain.AgentID(c.Principal.ID))
	if !ok {
		return domain.Agent{}, "", forbid("unknown agent")
	}
	if s.views.Retired(c.Tenant.ID, parent.ID) {
		return domain.Agent{}, "", forbid("a retired agent cannot register subagents")
	}
	reviewTimeout, err := parseReviewTimeout(in.ReviewTimeout)
	if err != nil {
		return domain.Agent{}, "", err
	}
	session, err := s.spawnAllowed(ctx, c, in.RequestID)
	if err != nil {
		return domain.Agent{}, "", err
	}
	token := newToken()
	a := domain.Agent{ID: domain.NewAgentID(), Tenant: c.Tenant.ID, Member: parent.Member, Parent: parent.ID,
		Role: in.Role, Brief: in.Brief, Memory: in.Memory, ReviewTimeout: reviewTimeout, Registered: true, Session: session,
		TokenSHA256: domain.HashToken(token), Scopes: domain.SubagentScopes(c.Token), CreatedAt: s.now().UTC()}
	if err := s.store.PutAgent(ctx, &a); err != nil {
		return a, "", stateErr(err, ErrUnavailable)
	}
	s.views.AgentMirror().Apply(kvstate.AgentKey(a.Tenant, a.ID), a, 0)
	return a, token, nil
}

func parseReviewTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second {
		return 0, invalid("review_timeout", "a Go duration of at least 1s")
	}
	return d, nil
}

// spawnAllowed runs steps 1–3 for agents.spawn:*, or claims the named
// approved spawn request, and returns that request's session (the
// parent's, which the subagent's approvals are shown on).
func (s *Service) spawnAllowed(ctx context.Context, c Caller, reqID domain.RequestID) (string, error) {
	if reqID != "" {
		rec, err := s.requesterRecord(ctx, c, reqID)
		if err != nil {
			return "", err
		}
		if rec.Capability != spawnCapability {
			return "", invalid("request_id", "not an agents.spawn:* request")
		}
		_, err = s.Claim(ctx, c, reqID, rec.CallDigest)
		return rec.Session, err
	}
	probe := &domain.Request{Tenant: c.Tenant.ID, Agent: domain.AgentID(c.Principal.ID), Capability: spawnCapability,
		Subject: domain.Subject{Kind: domain.SubjectTool}}
	v := s.checker.WithoutJudge().Check(ctx, c.Tenant, probe) // steps 1–3 only
	if v.Decided && v.Status == domain.StatusApproved && tokenPermits(c, probe) {
		return "", nil
	}
	return "", forbid("spawning is not allowed: submit an agents.spawn:* request and pass its request_id once approved")
}

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "cs_" + base64.RawURLEncoding.EncodeToString(b)
}
