package kvstate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// An ended delegation is never revived by its own approval written again
// (the outbox replaying it); a later approval starts it again; an active
// one is kept against another delegator.
func TestPutDelegationKeepsEndedAndActive(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	first := domain.Delegation{Tenant: "acme", Agent: "agt_b", Delegator: "agt_a", Session: "s/1", RequestID: "req_1", ApprovedAt: t0}
	if got, _, err := s.PutDelegation(ctx, &first); err != nil || got.RequestID != "req_1" {
		t.Fatalf("first put: %v %+v", err, got)
	}
	other := first
	other.Delegator, other.RequestID, other.ApprovedAt = "agt_c", "req_2", t0.Add(time.Minute)
	if got, _, err := s.PutDelegation(ctx, &other); err != nil || got.RequestID != "req_1" {
		t.Errorf("another delegator while active: %v; holds %s, want req_1", err, got.RequestID)
	}
	if _, _, err := s.EndDelegation(ctx, "acme", "agt_b", "s/1", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.EndDelegation(ctx, "acme", "agt_b", "s/1", t0.Add(3*time.Minute)); !errors.Is(err, kvstate.ErrNotFound) {
		t.Errorf("ending an ended delegation: %v, want ErrNotFound", err)
	}
	for _, replay := range []domain.Delegation{first, other} {
		if got, _, err := s.PutDelegation(ctx, &replay); err != nil || got.Active() {
			t.Errorf("replay of %s: %v; active %v, want it to stay ended", replay.RequestID, err, got.Active())
		}
	}
	later := first
	later.RequestID, later.ApprovedAt = "req_3", t0.Add(4*time.Minute)
	if got, _, err := s.PutDelegation(ctx, &later); err != nil || !got.Active() || got.RequestID != "req_3" {
		t.Errorf("a later approval: %v %+v, want active req_3", err, got)
	}
	if d, _, err := s.GetDelegation(ctx, "acme", "agt_b", "s/1"); err != nil || d.RequestID != "req_3" {
		t.Errorf("stored: %v %+v", err, d)
	}
}
