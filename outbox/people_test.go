package outbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// What each kind of change tells people (SPEC §9, "People's workers on the
// bus"): requested to whom it now waits on, withdrawn from whom it waited
// on and no longer does, with the request's status.
func TestPeopleMsgs(t *testing.T) {
	store, views, _ := testutil.NewState(t, `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}, {id: u-2, policy: {allow: ["*"]}}]
    groups: [{id: finance, members: [u-1, u-2]}]
    agents: [{id: agt_a, member: u-1}]
`)
	o := &Worker{store: store, views: views}
	onlyU2 := &Worker{store: store, views: views, listens: func(subject string) bool {
		return subject == events.PeopleSubject("acme", "u-2")
	}}
	u1, u2 := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}, domain.Ref{Kind: domain.KindPerson, ID: "u-2"}
	agent := domain.Ref{Kind: domain.KindAgent, ID: "agt_a"}
	finance := domain.Ref{Kind: domain.KindGroup, ID: "finance"}
	byU1 := domain.Approvals{{By: u1, Scope: domain.ScopeOnce}}
	byU1u2 := append(byU1, domain.Approval{By: u2, Scope: domain.ScopeOnce})
	for _, c := range []struct {
		name    string
		typ     string
		was, to *domain.Ref
		status  domain.Status
		counted domain.Approvals
		want    string // "<type short> <person> <status>" each, in order
	}{
		{"created on a person", events.TypeRequestCreated, nil, &u1, domain.StatusPending, nil, "requested u-1"},
		{"moved to another person", events.TypeRequestEscalated, &u1, &u2, domain.StatusPending, nil, "withdrawn u-1 pending, requested u-2"},
		{"escalated from an agent", events.TypeRequestEscalated, &agent, &u1, domain.StatusPending, nil, "requested u-1"},
		{"next stage, same person", events.TypeRequestUpdated, &u1, &u1, domain.StatusPending, nil, "requested u-1"},
		{"answered", events.TypeRequestDecided, &u1, nil, domain.StatusApproved, nil, "withdrawn u-1 approved"},
		{"expired", events.TypeRequestExpired, &u1, nil, domain.StatusExpired, nil, "withdrawn u-1 expired"},
		{"cancelled", events.TypeRequestCancelled, &u1, nil, domain.StatusCancelled, nil, "withdrawn u-1 cancelled"},
		{"still on the same person", events.TypeRequestUpdated, &u1, nil, domain.StatusPending, nil, ""},
		{"agent to agent", events.TypeRequestEscalated, &agent, &agent, domain.StatusPending, nil, ""},
		{"on a group", events.TypeRequestCreated, nil, &finance, domain.StatusPending, nil, "requested u-1, requested u-2"},
		{"one of two allowed", events.TypeRequestUpdated, &finance, &finance, domain.StatusPending, byU1, "withdrawn u-1 pending"},
		{"the group's quorum reached", events.TypeRequestDecided, &finance, nil, domain.StatusApproved, byU1u2, "withdrawn u-2 approved"},
		{"denied after one allow", events.TypeRequestDecided, &finance, nil, domain.StatusDenied, byU1, "withdrawn u-2 denied"},
	} {
		r := domain.Request{ID: domain.NewRequestID(), Tenant: "acme", Status: c.status, Revision: 3, Approver: c.to, Approvals: c.counted,
			Tool: "send_email", Arguments: json.RawMessage(`{"to":"a@example.com"}`), Reason: "<why>"}
		if c.to == nil && c.status == domain.StatusPending {
			r.Approver = c.was
		}
		if c.status.Terminal() {
			r.Decision = &domain.Decision{Status: c.status, By: domain.Ref{Kind: domain.KindDeadline}}
			if c.status == domain.StatusApproved || c.status == domain.StatusDenied {
				r.Decision.By = u2
			}
		}
		data, _ := json.Marshal(r)
		h := nats.Header{}
		if c.was != nil {
			h.Set(events.HeaderWasTo, events.WorkTo(*c.was))
		}
		if c.to != nil {
			h.Set(events.HeaderWorkTo, events.WorkTo(*c.to))
		}
		events.ChangeHeaders(h, c.typ, "acme", string(r.ID), r.Revision, time.Now(), "")
		change := events.Change{Type: c.typ, Tenant: "acme", Subject: string(r.ID), Revision: 3}
		if s := strings.Join(peopleSaid(t, c.name, o.peopleMsgs(h, data, change), r, data), ", "); s != c.want {
			t.Errorf("%s: %q, want %q", c.name, s, c.want)
		}
		// Only u-2 listens: u-1 is sent nothing, u-2 what it was before.
		var want2 []string
		for _, w := range strings.Split(c.want, ", ") {
			if strings.Contains(w, " u-2") {
				want2 = append(want2, w)
			}
		}
		if s := strings.Join(peopleSaid(t, c.name, onlyU2.peopleMsgs(h, data, change), r, data), ", "); s != strings.Join(want2, ", ") {
			t.Errorf("%s, only u-2 listening: %q, want %q", c.name, s, strings.Join(want2, ", "))
		}
	}
}

// peopleSaid is what msgs tell people about r (stored as data), each
// "<type short> <person> [<status>]", checking each message's event.
func peopleSaid(t *testing.T, name string, msgs []*nats.Msg, r domain.Request, data []byte) []string {
	t.Helper()
	var got []string
	for _, m := range msgs {
		e, err := events.DecodeHeaders(m.Header)
		if err != nil || e.Subject() != string(r.ID) {
			t.Fatalf("%s: %v %s", name, err, e.Subject())
		}
		person := strings.TrimPrefix(m.Subject, "countersign.acme.people.")
		switch e.Type() {
		case events.TypeReviewRequested:
			var b domain.PersonReviewBundle
			_ = json.Unmarshal(m.Data, &b)
			if b.Request.ID != r.ID || b.Decider != (domain.Ref{Kind: domain.KindPerson, ID: person}) {
				t.Errorf("%s: bundle %s", name, m.Data)
			}
			var stored struct{ Request json.RawMessage }
			if json.Unmarshal(m.Data, &stored) != nil || !bytes.Equal(stored.Request, data) {
				t.Errorf("%s: the bundle's request is not the record as stored, as its event carries it:\n%s\n%s", name, stored.Request, data)
			}
			got = append(got, "requested "+person)
		case events.TypeReviewWithdrawn:
			var w domain.ReviewWithdrawn
			_ = json.Unmarshal(m.Data, &w)
			if w.RequestID != r.ID {
				t.Errorf("%s: withdrawn %s", name, m.Data)
			}
			got = append(got, fmt.Sprintf("withdrawn %s %s", person, w.Status))
		}
	}
	return got
}

// BenchmarkPeopleMsgs measures what the messages to people's subjects cost
// the outbox per person request: those of its created change (one
// review.requested) and of its decided one (one review.withdrawn), and
// when nobody listens for that person.
//
//	go test -run '^$' -bench PeopleMsgs -benchmem ./outbox/
func BenchmarkPeopleMsgs(b *testing.B) {
	store, views, _ := testutil.NewState(b, `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}]
`)
	o := &Worker{store: store, views: views}
	u1 := domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
	now := time.Now()
	r := domain.Request{ID: domain.NewRequestID(), Tenant: "acme", Agent: "agt_a", Tool: "send_email",
		Capability: domain.Capability{Action: "tools.call", Target: "send_email"}, Arguments: json.RawMessage(`{"n":12345}`),
		Subject: domain.Subject{Kind: "tool"}, Status: domain.StatusPending, Approver: &u1, Chain: []domain.AgentID{"agt_a"},
		Timeout: "5m", CallDigest: "sha256:" + strings.Repeat("0", 64), CreatedAt: now, DeadlineAt: now.Add(5 * time.Minute), RequiredApprovals: 1}
	created, _ := json.Marshal(r)
	r.Status, r.Revision = domain.StatusApproved, 1
	r.Decision = &domain.Decision{Status: domain.StatusApproved, By: u1, Scope: domain.ScopeOnce, DecidedAt: now}
	decided, _ := json.Marshal(r)
	ch, dh := nats.Header{}, nats.Header{}
	ch.Set(events.HeaderWorkTo, events.WorkTo(u1))
	dh.Set(events.HeaderWasTo, events.WorkTo(u1))
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	events.ChangeHeaders(ch, events.TypeRequestCreated, "acme", string(r.ID), 0, now, tp)
	events.ChangeHeaders(dh, events.TypeRequestDecided, "acme", string(r.ID), 1, now, tp)
	cc := events.Change{Type: events.TypeRequestCreated, Tenant: "acme", Subject: string(r.ID)}
	dc := events.Change{Type: events.TypeRequestDecided, Tenant: "acme", Subject: string(r.ID), Revision: 1}
	for _, listening := range []bool{true, false} {
		name, want := "listening", 1
		if !listening {
			name, want = "nobody-listening", 0 // the embedded server sees no subscriber
			o.listens = func(string) bool { return false }
		}
		b.Run(name, func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				if len(o.peopleMsgs(ch, created, cc)) != want || len(o.peopleMsgs(dh, decided, dc)) != want {
					b.Fatalf("not %d messages per change", want)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time this process has used: steadier than ns/op on
// a loaded machine, which counts the time others' work holds the cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
