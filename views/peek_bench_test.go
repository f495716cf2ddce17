package views

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
)

// benchTerminal is a terminal record as the fill bench stores it.
func benchTerminal(tb testing.TB) []byte {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	exp := now.Add(5 * time.Minute)
	r := domain.Request{ID: domain.NewRequestID(), Tenant: "demo", Agent: "agt_programmer", Session: "ses-1",
		Capability: domain.Capability{Action: "tools.call", Target: "bench_refund"}, Tool: "bench_refund", Arguments: json.RawMessage(`{"amount":42,"order":"ord_123456"}`),
		Subject: domain.Subject{Kind: "tool"}, CallDigest: "sha256:eb1c95e08251efb2858fca40268f979468c80b0be0c53bb282685694f571fd56",
		Timeout: "24h", Status: domain.StatusApproved, Chain: []domain.AgentID{"agt_main", "agt_programmer"},
		Revision: 1, CreatedAt: now, DeadlineAt: now.Add(24 * time.Hour),
		Decision: &domain.Decision{Status: domain.StatusApproved, By: domain.Ref{Kind: "grant", ID: "grt_01M8Q6PXKQKVCTXYCVVVSACWTH"},
			DecidedAt: now, ExpiresAt: &exp, Scope: domain.ScopeLifetime}}
	b, err := json.Marshal(r)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkPeekRequest is the replay's cost per stored terminal record.
//
//	go test -run '^$' -bench PeekRequest ./views/
func BenchmarkPeekRequest(b *testing.B) {
	data := benchTerminal(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, ok := peekRequest(data); !ok {
			b.Fatal("not peeked")
		}
	}
}
