package deciders_test

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

const backupYAML = `tenants:
  - id: acme
    members:
      - {id: u-1, policy: {allow: ["*"]}, backup: u-2, answer_within: 10m}
      - {id: u-2, policy: {allow: ["*"]}, backup: u-3, answer_within: 20m}
      - {id: u-3, policy: {allow: ["*"]}}
    agents:
      - {id: main, member: u-1}
`

func waitingOn(kind, id string, passed ...domain.MemberID) *domain.Request {
	r := req("main", "tools.call", "deploy", "", "tool")
	r.Status, r.Approver = domain.StatusPending, &domain.Ref{Kind: kind, ID: id}
	if passed != nil {
		r.Escalation = &domain.Escalation{By: domain.Ref{Kind: domain.KindDeadline}, Passed: passed}
	}
	return r
}

// A request waiting on a person moves to their backup after their
// answer_within; not when it waits on an agent or on a person without a
// backup, and never back to a person it has already moved away from (a
// config changed since the move may have made a cycle).
func TestBackupOf(t *testing.T) {
	_, views, tenants := testutil.NewState(t, backupYAML)
	tests := []struct {
		name   string
		r      *domain.Request
		to     string
		within time.Duration
	}{
		{"person with a backup", waitingOn(domain.KindPerson, "u-1"), "u-2", 10 * time.Minute},
		{"the backup's backup", waitingOn(domain.KindPerson, "u-2", "u-1"), "u-3", 20 * time.Minute},
		{"no backup", waitingOn(domain.KindPerson, "u-3", "u-1", "u-2"), "", 0},
		{"an agent", waitingOn(domain.KindAgent, "main"), "", 0},
		{"an unknown person", waitingOn(domain.KindPerson, "u-9"), "", 0},
	}
	for _, tt := range tests {
		to, within, ok := deciders.Backup(views, tt.r)
		if ok != (tt.to != "") || to.ID != tt.to || within != tt.within || (ok && to.Kind != domain.KindPerson) {
			t.Errorf("%s: Backup = %+v %s %v, want %q %s", tt.name, to, within, ok, tt.to, tt.within)
		}
	}
	tenants[0].Members["u-3"].Backup, tenants[0].Members["u-3"].AnswerWithin = "u-1", time.Minute // u-1 → u-2 → u-3 → u-1
	if to, _, ok := deciders.Backup(views, waitingOn(domain.KindPerson, "u-3", "u-1", "u-2")); ok {
		t.Errorf("a request that passed u-1 moves back to u-1: %+v", to)
	}
}

// moves records the timers' backup moves.
type moves struct {
	noActions
	got chan domain.Ref
}

func (m moves) MoveToBackup(_ context.Context, _ domain.TenantID, _ domain.RequestID, from domain.Ref, _ uint64) error {
	m.got <- from
	return nil
}

// next is the next move made, failing the test when none comes.
func (m moves) next(t *testing.T) domain.Ref {
	t.Helper()
	select {
	case from := <-m.got:
		return from
	case <-time.After(10 * time.Second):
		t.Fatal("no move made")
		return domain.Ref{}
	}
}

// A move's time is derived from the record, as a process that starts
// later reads it (a restart, or a process taking over another's share):
// answer_within after its write, or after its last move if that is later;
// never answer_within after the process came to see it.
func TestBackupTimerDerivedFromTheRecord(t *testing.T) {
	_, views, _ := testutil.NewState(t, backupYAML)
	clock := testutil.NewClock(time.Now())
	acts := moves{got: make(chan domain.Ref, 4)}
	tm, err := deciders.NewTimers(deciders.TimersConfig{Views: views, Act: acts, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = tm.Run(ctx) }()

	written := kvstate.Record{Request: *waitingOn(domain.KindPerson, "u-1"), Written: clock.Now().Add(-6 * time.Minute)}
	written.ID, written.DeadlineAt = "req_a", clock.Now().Add(time.Hour)
	tm.Observe("acme.req_a", written, false)
	moved := kvstate.Record{Request: *waitingOn(domain.KindPerson, "u-2", "u-1"), Written: clock.Now().Add(-time.Hour)}
	moved.ID, moved.DeadlineAt = "req_b", clock.Now().Add(time.Hour)
	moved.Escalation.At = clock.Now().Add(-15 * time.Minute) // u-2's 20m run from the move, not from the older write
	tm.Observe("acme.req_b", moved, false)

	clock.Advance(3*time.Minute + time.Second) // not yet: 9m since req_a's write, 18m since req_b's move
	if n := clock.Waiting(); n != 2 {
		t.Fatalf("%d of the two moves still armed, want both", n)
	}
	clock.Advance(time.Minute) // 10m after req_a's write
	if from := acts.next(t); from.ID != "u-1" {
		t.Fatalf("first move away from %+v, want u-1", from)
	}
	clock.Advance(time.Minute) // 20m after req_b's move
	if from := acts.next(t); from.ID != "u-2" {
		t.Fatalf("second move away from %+v, want u-2", from)
	}
}
