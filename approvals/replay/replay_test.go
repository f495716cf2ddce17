package replay_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals/replay"
	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// logBuilder seals entries as the audit writer does.
type logBuilder struct {
	tb    testing.TB
	lines [][]byte
	prev  string
}

func (l *logBuilder) add(typ, subject string, at time.Time, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		l.tb.Fatal(err)
	}
	if l.prev == "" {
		l.prev = audit.ZeroHash
	}
	e := audit.Entry{Seq: uint64(len(l.lines) + 1), At: at, Tenant: "acme", Type: typ, Actor: audit.Actor{Kind: "system"},
		Subject: subject, Data: data, Prev: l.prev}
	line, err := audit.Seal(&e)
	if err != nil {
		l.tb.Fatal(err)
	}
	l.prev, l.lines = e.Hash, append(l.lines, line)
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func request(id string, tool string, created time.Time) domain.Request {
	return domain.Request{ID: domain.RequestID(id), Tenant: "acme", Agent: "agt_main",
		Capability: domain.Capability{Action: domain.ActionToolsCall, Target: tool}, Tool: tool,
		Arguments: json.RawMessage(`{}`), Subject: domain.Subject{Kind: domain.SubjectTool}, Chain: []domain.AgentID{"agt_main"},
		CreatedAt: created, DeadlineAt: created.Add(time.Hour), RequiredApprovals: 1, Approvals: domain.Approvals{}}
}

func decidedBy(r domain.Request, by domain.Ref, quote string) domain.Request {
	r.Status = domain.StatusApproved
	r.Decision = &domain.Decision{Status: domain.StatusApproved, By: by, Scope: domain.ScopeOnce, DecidedAt: r.CreatedAt, QuotedRule: quote}
	return r
}

func waiting(r domain.Request) domain.Request {
	r.Status, r.Approver = domain.StatusPending, &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	return r
}

const acme = `tenants:
  - id: acme
    judge: {base_url: "http://127.0.0.1:1/v1", model: m}
    members:
      - {id: u-1, policy: {allow: ["*"]}}
    agents:
      - {id: agt_main, member: u-1, rules: ["Refunds under 50 GBP are fine."]}
`

// The grants in force are those of each request's moment: one revoked
// before a request does not decide it, one logged after a request but made
// before it does; a rule decision stands while the candidate keeps the
// rule's words, and goes to the judge when it does not.
func TestStateOfEachMoment(t *testing.T) {
	l := &logBuilder{tb: t}
	deploy := domain.Capability{Action: domain.ActionToolsCall, Target: "deploy"}
	g1 := domain.Grant{ID: "grt_1", Tenant: "acme", Agent: "agt_main", Capability: deploy, Effect: domain.EffectAllow,
		Scope: domain.ScopeLifetime, CreatedAt: at(0)}
	l.add(events.TypeGrantCreated, "grt_1", at(0), g1)
	l.add(events.TypeRequestDecided, "req_a", at(1), decidedBy(request("req_a", "deploy", at(1)), domain.Ref{Kind: domain.KindGrant, ID: "grt_1"}, ""))
	revoked := at(2)
	g1.RevokedAt = &revoked
	l.add(events.TypeGrantRevoked, "grt_1", at(2), g1)
	b := waiting(request("req_b", "deploy", at(3)))
	b.JudgeEscalated = true // the judge read the rules and did not decide
	l.add(events.TypeRequestCreated, "req_b", at(3), b)
	l.add(events.TypeRequestDecided, "req_c", at(5), decidedBy(request("req_c", "deploy", at(5)), domain.Ref{Kind: domain.KindGrant, ID: "grt_2"}, ""))
	g2 := g1
	g2.ID, g2.CreatedAt, g2.RevokedAt = "grt_2", at(4), nil
	l.add(events.TypeGrantCreated, "grt_2", at(6), g2) // logged after req_c, made before it
	l.add(events.TypeRequestDecided, "req_d", at(7), decidedBy(request("req_d", "issue_refund", at(7)),
		domain.Ref{Kind: domain.KindRule, ID: "rul_x"}, "Refunds under 50 GBP are fine."))

	run := func(yaml string) replay.Report {
		in, err := replay.Candidate([]byte(yaml), "acme", "24h", at(60))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := replay.Run(context.Background(), in, source(l.lines))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := run(acme); rep.Requests != 4 || len(rep.Changes) != 0 {
		t.Fatalf("the running config: %d requests, changes %+v; want 4, none", rep.Requests, rep.Changes)
	}
	rep := run(strings.Replace(acme, "Refunds under 50 GBP are fine.", "Refunds under 20 GBP are fine.", 1))
	if len(rep.Changes) != 1 || rep.Changes[0].Request != "req_d" || rep.Changes[0].New.By != replay.ByJudge {
		t.Fatalf("the rule's words changed: changes %+v; want req_d to the judge", rep.Changes)
	}
}

// Bad input is refused with the field it is about.
func TestCandidateRefusals(t *testing.T) {
	for _, tc := range []struct{ yaml, since, field string }{
		{"tenants: [", "", "config"},
		{"", "", "config"},
		{acme, "yesterday", "since"},
		{acme, "0s", "since"},
		{strings.Replace(acme, "id: acme", "id: other", 1), "", "config"},
	} {
		_, err := replay.Candidate([]byte(tc.yaml), "acme", tc.since, t0)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Candidate(%q, since %q): %v; want a refusal about %s", tc.yaml, tc.since, err, tc.field)
		}
	}
}
