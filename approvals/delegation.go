package approvals

import (
	"context"
	"errors"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// Delegated work (SPEC §3): when agent A's agents.delegate:B request with
// session S is approved, B works for A in S, and B's requests in S have the
// chain A's chain + B (deciders.ChainFor). The delegation is a record in the
// delegations bucket, written right after the approving write and, should a
// crash come in between, by the outbox, which sees the approval (its write
// carries events.HeaderGrants) and calls ensureGrants, hence
// ensureDelegation. It ends when A (or admin) cancels it or B is retired;
// the record stays, ended, so that a replayed approval never revives it.

// checkDelegate refuses an agents.delegate request whose target is not a
// live agent of the tenant (SPEC §3: 400). A target the requester may not
// hand work to (itself, an agent above it, another member's agent) is no
// bad input: the check order denies it by policy (deciders.DelegationBar).
func (s *Service) checkDelegate(c Caller, capability domain.Capability) error {
	if capability.Action != domain.ActionAgentsDelegate {
		return nil
	}
	target := domain.AgentID(capability.Target)
	switch _, ok := s.views.Agent(c.Tenant.ID, target); {
	case !ok:
		return invalid("capability.target", "no agent %q in this tenant", capability.Target)
	case s.views.Retired(c.Tenant.ID, target):
		return invalid("capability.target", "agent %q is retired", capability.Target)
	}
	return nil
}

// ensureDelegation writes the delegated work r's approval starts, if it
// starts any, and puts it in force in this process at once. Safe to repeat.
func (s *Service) ensureDelegation(ctx context.Context, r *domain.Request) error {
	if !r.Delegates() {
		return nil
	}
	key := kvstate.DelegationKey(r.Tenant, domain.AgentID(r.Capability.Target), r.Session)
	if d, held := s.views.DelegationMirror().Get(key); held && d.RequestID == r.ID {
		return nil
	}
	d := domain.DelegationFrom(r, s.now())
	got, rev, err := s.store.PutDelegation(ctx, &d)
	if err != nil {
		return stateErr(err, ErrUnavailable)
	}
	s.views.DelegationMirror().Apply(key, got, rev)
	return nil
}

// EndDelegation ends agent's delegated work in session (DELETE
// /v1/agents/{id}/delegations/{session}): only its delegator or admin may;
// anyone else, like a caller when there is none in force, gets
// ErrOtherNotFound. B's next requests in the session follow its own chain;
// requests already pending keep theirs. Errors: ErrOtherNotFound,
// InvalidRequest, ErrUnavailable.
func (s *Service) EndDelegation(ctx context.Context, c Caller, agent domain.AgentID, session string) (domain.Delegation, error) {
	if session == "" || len(session) > domain.MaxOpaqueIDLen {
		return domain.Delegation{}, invalid("session", "a session is 1 to %d bytes", domain.MaxOpaqueIDLen)
	}
	d, ok := s.views.Delegation(c.Tenant.ID, agent, session)
	if !ok || !d.Active() || (!c.Admin() && c.Principal != (domain.Ref{Kind: domain.KindAgent, ID: string(d.Delegator)})) {
		return domain.Delegation{}, ErrOtherNotFound
	}
	return s.endDelegation(ctx, c.Tenant.ID, agent, session)
}

func (s *Service) endDelegation(ctx context.Context, tenant domain.TenantID, agent domain.AgentID, session string) (domain.Delegation, error) {
	d, rev, err := s.store.EndDelegation(ctx, tenant, agent, session, s.now())
	if err != nil {
		return d, stateErr(err, ErrOtherNotFound)
	}
	s.views.DelegationMirror().Apply(kvstate.DelegationKey(tenant, agent, session), d, rev)
	return d, nil
}

// endDelegationsOf ends the delegated work of retired agents.
func (s *Service) endDelegationsOf(ctx context.Context, tenant domain.TenantID, agents []domain.AgentID) error {
	for _, a := range agents {
		for _, d := range s.views.DelegationsOf(tenant, a) {
			if !d.Active() {
				continue
			}
			if _, err := s.endDelegation(ctx, tenant, a, d.Session); err != nil && !errors.Is(err, ErrOtherNotFound) {
				return err
			}
		}
	}
	return nil
}
