package views_test

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

func newStore(t testing.TB) *kvstate.Store {
	t.Helper()
	b := testutil.NewJetStream(t)
	s, err := kvstate.Open(context.Background(), kvstate.Config{JS: b.JS, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pending(id domain.RequestID) *domain.Request {
	now := time.Now().UTC()
	return &domain.Request{ID: id, Tenant: "acme", Agent: "agt_a", Status: domain.StatusPending,
		Capability: domain.Capability{Action: "tools.call", Target: "x"}, Arguments: []byte(`{}`),
		Approver: &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, CreatedAt: now, DeadlineAt: now.Add(time.Hour)}
}

func endorse(agent domain.AgentID) kvstate.Mutation {
	return func(q *domain.Request) (string, error) {
		q.Endorsements = append(q.Endorsements, domain.Endorsement{Agent: agent, At: time.Now()})
		return events.TypeRequestEscalated, nil
	}
}
