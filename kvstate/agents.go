package kvstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/domain"
)

// AgentKey is the KV key of a registered subagent: <tenant>.<agent id>.
func AgentKey(tenant domain.TenantID, id domain.AgentID) string {
	return string(tenant) + "." + string(id)
}

// PutAgent stores a newly registered subagent; ErrExists if the id is taken.
func (s *Store) PutAgent(ctx context.Context, a *domain.Agent) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = s.agents.Create(ctx, AgentKey(a.Tenant, a.ID), data)
	if err = mapErr(err); errors.Is(err, ErrConflict) {
		return ErrExists
	}
	return err
}

// GetAgent reads a registered subagent and its KV revision; ErrNotFound if
// there is none.
func (s *Store) GetAgent(ctx context.Context, tenant domain.TenantID, id domain.AgentID) (domain.Agent, uint64, error) {
	e, err := s.agents.Get(ctx, AgentKey(tenant, id))
	if err != nil {
		return domain.Agent{}, 0, mapErr(err)
	}
	var a domain.Agent
	if err := json.Unmarshal(e.Value(), &a); err != nil {
		return a, 0, fmt.Errorf("kvstate: decode agent %s: %w", id, err)
	}
	return a, e.Revision(), nil
}

// RetireAgent marks a registered subagent retired at at with one
// compare-and-set and returns it with its KV revision. Retiring a retired
// agent returns it unchanged. Errors: ErrNotFound, ErrConflict.
func (s *Store) RetireAgent(ctx context.Context, tenant domain.TenantID, id domain.AgentID, at time.Time) (domain.Agent, uint64, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		a, rev, err := s.GetAgent(ctx, tenant, id)
		if err != nil || a.RetiredAt != nil {
			return a, rev, err
		}
		at := at.UTC()
		a.RetiredAt = &at
		data, err := json.Marshal(a)
		if err != nil {
			return a, 0, err
		}
		rev, err = s.agents.Update(ctx, AgentKey(tenant, id), data, rev)
		if err = mapErr(err); !errors.Is(err, ErrConflict) {
			return a, rev, err
		}
	}
	return domain.Agent{}, 0, ErrConflict
}

// RuleKey is the KV key of a rule: <tenant>.<agent id>.<rule id>.
func RuleKey(tenant domain.TenantID, agent domain.AgentID, id domain.RuleID) string {
	return string(tenant) + "." + string(agent) + "." + string(id)
}

// PutRule stores a rule of tenant.
func (s *Store) PutRule(ctx context.Context, tenant domain.TenantID, r *domain.Rule) error {
	r.Tenant = tenant
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.rules.Put(ctx, RuleKey(tenant, r.Agent, r.ID), data)
	return mapErr(err)
}

// GetRule reads a kept rule; ErrNotFound if there is none.
func (s *Store) GetRule(ctx context.Context, tenant domain.TenantID, agent domain.AgentID, id domain.RuleID) (domain.Rule, error) {
	e, err := s.rules.Get(ctx, RuleKey(tenant, agent, id))
	if err != nil {
		return domain.Rule{}, mapErr(err)
	}
	var r domain.Rule
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return r, fmt.Errorf("kvstate: decode rule %s: %w", id, err)
	}
	return r, nil
}

// DeleteRule removes a rule; ErrNotFound if there is none.
func (s *Store) DeleteRule(ctx context.Context, tenant domain.TenantID, agent domain.AgentID, id domain.RuleID) error {
	key := RuleKey(tenant, agent, id)
	e, err := s.rules.Get(ctx, key)
	if err != nil {
		return mapErr(err)
	}
	return mapErr(s.rules.Delete(ctx, key, jetstreamLastRevision(e.Revision())))
}
