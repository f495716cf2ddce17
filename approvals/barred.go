package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// Delegated work stored before authority was bound to one member (SPEC
// §3) may hand an agent to another member's agent, to itself or to an
// agent above its delegator. EndBarredDelegations ends it, through the
// path a cancel takes, and records each end in the tenant's audit log as
// events.TypeDelegationEnded.

// EndBarredDelegations ends every delegation in force that delegating now
// would be barred from (deciders.DelegationBar), and returns those it
// ended. The app runs it at start, once the views are loaded; it is safe
// to run in every process at once and again (one that has ended is left
// alone, and its audit entry is made once). Errors: ErrUnavailable.
func (s *Service) EndBarredDelegations(ctx context.Context) ([]domain.Delegation, error) {
	var ended []domain.Delegation
	for _, d := range s.barredDelegations() {
		got, err := s.endDelegation(ctx, d.Tenant, d.Agent, d.Session)
		if errors.Is(err, ErrOtherNotFound) {
			continue // ended meanwhile, by another process or its delegator
		}
		if err != nil {
			return ended, err
		}
		why := deciders.DelegationBar(s.views, d.Tenant, d.Delegator, d.Agent, deciders.ChainFor(s.views, d.Tenant, d.Delegator, d.Session))
		if err := s.recordEnded(ctx, got, why); err != nil {
			return ended, err
		}
		s.log.Warn("delegated work ended: authority never crosses members", "tenant", d.Tenant, "agent", d.Agent, "delegator", d.Delegator, "request_id", d.RequestID, "why", why)
		ended = append(ended, got)
	}
	return ended, nil
}

// barredDelegations lists the delegations in force that DelegationBar
// bars, in key order.
func (s *Service) barredDelegations() []domain.Delegation {
	var active []domain.Delegation
	s.views.DelegationMirror().Each(func(_ string, d domain.Delegation) {
		if d.Active() {
			active = append(active, d)
		}
	})
	sort.Slice(active, func(i, j int) bool {
		return kvstate.DelegationKey(active[i].Tenant, active[i].Agent, active[i].Session) < kvstate.DelegationKey(active[j].Tenant, active[j].Agent, active[j].Session)
	})
	var out []domain.Delegation
	for _, d := range active {
		chain := deciders.ChainFor(s.views, d.Tenant, d.Delegator, d.Session)
		if deciders.DelegationBar(s.views, d.Tenant, d.Delegator, d.Agent, chain) != "" {
			out = append(out, d)
		}
	}
	return out
}

// endedEvent is the data of a TypeDelegationEnded audit entry.
type endedEvent struct {
	domain.Delegation
	Why string `json:"why"`
}

// recordEnded appends d's end to its tenant's audit log, once: the entry's
// id is the delegation's key and the request that started it.
func (s *Service) recordEnded(ctx context.Context, d domain.Delegation, why string) error {
	data, err := json.Marshal(endedEvent{Delegation: d, Why: why})
	if err != nil {
		return err
	}
	id := "delegation-ended-" + kvstate.DelegationKey(d.Tenant, d.Agent, d.Session) + "-" + string(d.RequestID)
	err = audit.Append(ctx, s.store.JetStream(), audit.Input{ID: id, Tenant: d.Tenant, Type: events.TypeDelegationEnded,
		Actor: audit.Actor{Kind: "system"}, Subject: string(d.Agent), At: *d.EndedAt, Data: data})
	if err != nil {
		return ErrUnavailable.Wrap(err)
	}
	return nil
}
