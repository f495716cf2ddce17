package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals/replay"
	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// fillLog is the audit log of `countersign bench --scenario fill` with n
// requests, as that scenario leaves it: agt_programmer's lifetime grant
// for bench_refund, then n requests: all but pending the programmer's
// bench_refund, decided by the grant in their 201; the rest agt_main's
// bench_fill, waiting on u-1. Each line is sealed as the writer seals it.
func fillLog(tb testing.TB, n, pending int) [][]byte {
	tb.Helper()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	capability := domain.Capability{Action: domain.ActionToolsCall, Target: "bench_refund"}
	g := domain.Grant{ID: "grt_01FILL", Tenant: "demo", Agent: "agt_programmer", Capability: capability, Effect: domain.EffectAllow,
		Scope: domain.ScopeLifetime, CreatedBy: domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, CreatedAt: start}
	var lines [][]byte
	prev := audit.ZeroHash
	add := func(typ, subject string, at time.Time, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		e := audit.Entry{Seq: uint64(len(lines) + 1), At: at, Tenant: "demo", Type: typ, Actor: audit.Actor{Kind: "system"},
			Subject: subject, Data: data, Prev: prev}
		line, err := audit.Seal(&e)
		if err != nil {
			tb.Fatal(err)
		}
		prev = e.Hash
		lines = append(lines, line)
	}
	add(events.TypeGrantCreated, string(g.ID), start, g)
	for i := range n {
		at := start.Add(time.Duration(i+1) * time.Millisecond)
		r := domain.Request{ID: domain.RequestID(fmt.Sprintf("req_%08d", i)), Tenant: "demo", Agent: "agt_programmer", Capability: capability,
			Tool: capability.Target, Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d,"amount":4900,"currency":"GBP"}`, i)),
			Subject: domain.Subject{Kind: domain.SubjectTool}, Chain: []domain.AgentID{"agt_main", "agt_programmer"}, CreatedAt: at,
			DeadlineAt: at.Add(24 * time.Hour), RequiredApprovals: 1, Approvals: domain.Approvals{}, Endorsements: []domain.Endorsement{}}
		typ := events.TypeRequestDecided
		if i >= n-pending {
			r.Agent, r.Chain, r.Tool = "agt_main", []domain.AgentID{"agt_main"}, "bench_fill"
			r.Capability = domain.Capability{Action: domain.ActionToolsCall, Target: "bench_fill"}
			typ, r.Status, r.Approver = events.TypeRequestCreated, domain.StatusPending, &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
		} else {
			r.Status = domain.StatusApproved
			r.Decision = &domain.Decision{Status: domain.StatusApproved, By: domain.Ref{Kind: domain.KindGrant, ID: string(g.ID)},
				Scope: domain.ScopeOnce, DecidedAt: at}
		}
		add(typ, string(r.ID), at, r)
	}
	return lines
}

func source(lines [][]byte) replay.Source {
	return func(fn func([]byte) error) error {
		for _, l := range lines {
			if err := fn(l); err != nil {
				return err
			}
		}
		return nil
	}
}

func demoInput(tb testing.TB, yaml string) replay.Input {
	tb.Helper()
	in, err := replay.Candidate([]byte(yaml), "demo", "8760h", time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		tb.Fatal(err)
	}
	return in
}

// The fill's log replayed with its own config changes nothing.
func TestFillLogReplaysUnchanged(t *testing.T) {
	rep, err := replay.Run(context.Background(), demoInput(t, config.DemoYAML), source(fillLog(t, 2000, 100)))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 2000 || len(rep.Changes) != 0 || len(rep.Summary) != 2 || rep.Summary[0].Decider != 100 || rep.Summary[1].Grant != 1900 {
		t.Fatalf("report %+v; want 2000 requests, no change, 1900 by the grant and 100 on u-1", rep)
	}
}

// BenchmarkReplayFill replays a fill log of 100,000 requests (99,000
// decided by the grant, 1,000 pending) through the demo config:
//
//	go test ./approvals/replay -run '^$' -bench ReplayFill -benchtime 5x
func BenchmarkReplayFill(b *testing.B) {
	lines := fillLog(b, 100000, 1000)
	in := demoInput(b, config.DemoYAML)
	b.ResetTimer()
	for range b.N {
		rep, err := replay.Run(context.Background(), in, source(lines))
		if err != nil || rep.Requests != 100000 {
			b.Fatalf("replay: %d requests, %v", rep.Requests, err)
		}
	}
	b.ReportMetric(float64(100000*b.N)/b.Elapsed().Seconds(), "requests/s")
}
