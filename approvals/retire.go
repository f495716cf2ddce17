package approvals

import (
	"context"
	"errors"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// RetireAgent retires a registered subagent and every agent registered
// below it (DELETE /v1/agents/{id}): their tokens stop authenticating at
// once in this process (other processes when their agent mirror sees the
// change), and each of their pending requests is cancelled through the
// cancel transition, by its requester, with a note that says why; their
// delegated work ends (SPEC §3). The
// agent's person, admin, or an agent above it may retire it; configured
// agents are retired in the config file. Retiring a retired agent returns
// it again and finishes any cancellation left undone. Errors:
// ErrOtherNotFound, ErrForbidden, ErrUnavailable.
func (s *Service) RetireAgent(ctx context.Context, c Caller, id domain.AgentID) (domain.Agent, error) {
	a, err := s.agentFor(c, id)
	if err != nil {
		return domain.Agent{}, err
	}
	if !a.Registered {
		return domain.Agent{}, forbid("configured agents are retired by removing them from the config file")
	}
	if !mayLoosen(c) && !s.below(c, id) {
		return domain.Agent{}, forbid("only the agent's person, an agent above it, or admin may retire it")
	}
	retired := s.subtree(c.Tenant.ID, id)
	var top domain.Agent
	for i, aid := range retired {
		got, err := s.retireOne(ctx, c.Tenant.ID, aid)
		if err != nil {
			return domain.Agent{}, err
		}
		if i == 0 {
			top = got
		}
	}
	// What they hold here ends before their requests are cancelled, so a
	// held long-poll answers 401, not the cancellation; other processes end
	// theirs when their agent mirror sees the retirement.
	s.RevokeStale()
	if err := s.endDelegationsOf(ctx, c.Tenant.ID, retired); err != nil {
		return domain.Agent{}, err
	}
	return top, s.cancelPendingOf(ctx, c.Tenant.ID)
}

// subtree lists agent and every agent registered below it, top first.
func (s *Service) subtree(tenant domain.TenantID, agent domain.AgentID) []domain.AgentID {
	out := []domain.AgentID{agent}
	seen := map[domain.AgentID]bool{agent: true}
	for i := 0; i < len(out); i++ {
		for _, child := range s.views.ChildrenOf(tenant, out[i]) {
			if !seen[child.ID] {
				seen[child.ID] = true
				out = append(out, child.ID)
			}
		}
	}
	return out
}

// retireOne marks one registered agent retired and puts it in the mirror.
func (s *Service) retireOne(ctx context.Context, tenant domain.TenantID, id domain.AgentID) (domain.Agent, error) {
	a, rev, err := s.store.RetireAgent(ctx, tenant, id, s.now())
	if err != nil {
		return a, stateErr(err, ErrOtherNotFound)
	}
	s.views.AgentMirror().Apply(kvstate.AgentKey(tenant, id), a, rev)
	return a, nil
}

// cancelPendingOf cancels the pending requests of retired agents: those
// just retired, and any registered under them meanwhile (Views.Retired
// looks up the ancestry). A request that ended or passed its deadline
// meanwhile is left alone.
func (s *Service) cancelPendingOf(ctx context.Context, tenant domain.TenantID) error {
	for _, rec := range s.views.Pending(tenant) {
		if rec.Status != domain.StatusPending || !s.views.Retired(tenant, rec.Agent) {
			continue
		}
		note := "agent " + string(rec.Agent) + " was retired"
		_, err := s.transition(ctx, kvstate.Record{Request: domain.Request{Tenant: tenant, ID: rec.ID}}, s.cancel(note))
		if err != nil && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	return nil
}
