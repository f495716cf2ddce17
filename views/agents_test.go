package views_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// A retirement written by one process reaches another through its agent
// mirror: the retired agent's token and every token below it stop
// authenticating there, with no call of its own.
func TestRetiredAgentStopsAuthenticatingInAnotherProcess(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tenant := &domain.Tenant{ID: "acme", Agents: map[domain.AgentID]*domain.Agent{"agt_top": {ID: "agt_top", Tenant: "acme", Member: "u-1"}}}
	other := newViews(t, s, []*domain.Tenant{tenant})
	done := make(chan error, 1)
	go func() { done <- other.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	parent := domain.Agent{ID: domain.NewAgentID(), Tenant: "acme", Member: "u-1", Parent: "agt_top", Registered: true, TokenSHA256: domain.HashToken("tok-parent")}
	child := domain.Agent{ID: domain.NewAgentID(), Tenant: "acme", Member: "u-1", Parent: parent.ID, Registered: true, TokenSHA256: domain.HashToken("tok-child")}
	for _, a := range []*domain.Agent{&parent, &child} {
		if err := s.PutAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	authenticates := func(tok string) bool { _, _, ok := other.Authenticate(tok); return ok }
	testutil.Eventually(t, 5*time.Second, func() bool { return authenticates("tok-parent") && authenticates("tok-child") }, "the other process sees both agents")
	if kids := other.ChildrenOf("acme", parent.ID); len(kids) != 1 || kids[0].ID != child.ID {
		t.Fatalf("ChildrenOf(parent) = %+v, want the child", kids)
	}

	// Only the parent is retired; the child goes with it.
	got, _, err := s.RetireAgent(ctx, "acme", parent.ID, time.Now())
	if err != nil || got.RetiredAt == nil {
		t.Fatalf("RetireAgent = %+v, %v", got, err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool { return !authenticates("tok-parent") }, "the retired parent's token is refused")
	if authenticates("tok-child") {
		t.Errorf("the child of a retired agent still authenticates")
	}
	if !other.Retired("acme", child.ID) || other.Retired("acme", "agt_top") {
		t.Errorf("Retired(child)=%v Retired(agt_top)=%v, want true, false", other.Retired("acme", child.ID), other.Retired("acme", "agt_top"))
	}

	again, _, err := s.RetireAgent(ctx, "acme", parent.ID, time.Now().Add(time.Hour))
	if err != nil || again.RetiredAt == nil || !again.RetiredAt.Equal(*got.RetiredAt) {
		t.Errorf("retiring again = %+v, %v; want it unchanged", again, err)
	}
	if _, _, err := s.RetireAgent(ctx, "acme", domain.NewAgentID(), time.Now()); !errors.Is(err, kvstate.ErrNotFound) {
		t.Errorf("retiring an unknown agent: %v, want ErrNotFound", err)
	}
}
