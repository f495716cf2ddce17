package app_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// backupYAML is tenant demo whose u-1 is covered by u-2 after 10m, u-2 by
// u-3 after 10m, and u-3 by no one; agt_main works for u-1. top and
// tenantExtra are added at the top and under the tenant.
func backupYAML(top, tenantExtra string) string {
	return top + `tenants:
  - id: demo
    members:
      - {id: u-1, policy: {allow: ["*"]}, backup: u-2, answer_within: 10m}
      - {id: u-2, policy: {allow: ["*"]}, backup: u-3, answer_within: 10m}
      - {id: u-3, policy: {allow: ["*"]}}
    agents: [{id: agt_main, member: u-1}]
    tokens:
      - {token: tok-u1, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: tok-u2, principal: "person:u-2", scopes: [approvals:read, approvals:write]}
      - {token: tok-u3, principal: "person:u-3", scopes: [approvals:read, approvals:write]}
      - {token: dev-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read]}
` + tenantExtra
}

// moved is what these tests read of a record.
type moved struct {
	record
	Escalation *struct {
		By     struct{ Kind, ID string }
		At     time.Time
		Passed []string
	} `json:"escalation"`
}

func getMoved(t *testing.T, base, id string) moved {
	t.Helper()
	var r moved
	if code := newClient(base, "dev-main").do(t, "GET", "/v1/requests/"+id, nil, nil, &r); code != 200 {
		t.Fatalf("GET %s: %d", id, code)
	}
	return r
}

func (r moved) waitsOn(person string) bool {
	return r.Status == "pending" && r.Approver != nil && r.Approver.Kind == "person" && r.Approver.ID == person
}

// answerCode answers id as token at revision rev and returns the status.
func answerCode(t *testing.T, base, token, id string, rev uint64, decision string) int {
	t.Helper()
	return newClient(base, token).do(t, "POST", "/v1/requests/"+id, map[string]any{"expected": rev, "decision": decision}, nil, nil)
}

// A person away for their answer_within is covered by their backup: the
// request moves to u-2 (approver, revision, request.escalated by the
// deadline, delivered with u-2's decision links), u-1 can no longer
// answer it, and u-2 can.
func TestBackupAnswersWhenPersonIsAway(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	rc := newReceiver(t, nil)
	t.Setenv("CS_TEST_HOOK_SECRET", hookSecret)
	t.Setenv("CS_TEST_LINK_SECRET", "the decision links' test key")
	srv := servertest.Start(t, servertest.WithClock(clock), servertest.WithNotify(testTuning(t, rc)),
		servertest.WithConfig(backupYAML(linksTop, "    webhooks:\n"+hookLine(rc.srv.URL, "cloudevents", "request.created, request.escalated"))))
	var r record
	if code := newClient(srv.URL, "dev-main").do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 || r.Approver == nil || r.Approver.ID != "u-1" {
		t.Fatalf("submit: %d %+v", code, r)
	}

	// The record's write is stamped by the server's wall clock: step from now.
	clock.Set(time.Now().Add(9 * time.Minute))
	if got := getMoved(t, srv.URL, r.ID); !got.waitsOn("u-1") || got.Revision != 0 {
		t.Fatalf("before u-1's answer_within: %+v", got)
	}
	clock.Set(time.Now().Add(10*time.Minute + time.Second))
	testutil.Eventually(t, 10*time.Second, func() bool { return getMoved(t, srv.URL, r.ID).waitsOn("u-2") }, "the request moved to u-1's backup u-2")
	got := getMoved(t, srv.URL, r.ID)
	if got.Revision != 1 || got.Escalation == nil || got.Escalation.By.Kind != "deadline" || !slices.Equal(got.Escalation.Passed, []string{"u-1"}) {
		t.Fatalf("after the move: revision %d, escalation %+v", got.Revision, got.Escalation)
	}

	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.of(r.ID)) == 2 }, "request.escalated delivered")
	d := rc.of(r.ID)[1]
	var data struct {
		Approver   struct{ Kind, ID string }
		Escalation struct{ By struct{ Kind string } }
		Links      struct {
			ApproveURL string `json:"approve_url"`
		} `json:"links"`
	}
	if err := json.Unmarshal(d.Data, &data); err != nil || d.Type != "dev.countersign.request.escalated" || d.Revision != "1" ||
		data.Approver.ID != "u-2" || data.Escalation.By.Kind != "deadline" || !strings.HasPrefix(data.Links.ApproveURL, "https://approvals.example.com/d/") {
		t.Fatalf("escalated delivery = %s %s (%v)", d.Type, d.Data, err)
	}

	if code := answerCode(t, srv.URL, "tok-u1", r.ID, 0, "allow"); code != 409 {
		t.Errorf("u-1's answer at the old revision: %d, want 409", code)
	}
	if code := answerCode(t, srv.URL, "tok-u1", r.ID, 1, "allow"); code != 409 {
		t.Errorf("u-1's answer after the move: %d, want 409", code)
	}
	if code := answerCode(t, srv.URL, "tok-u2", r.ID, 1, "allow"); code != 200 {
		t.Fatalf("u-2's answer: %d", code)
	}
	if got := getMoved(t, srv.URL, r.ID); got.Status != "approved" || got.Decision.By.ID != "u-2" {
		t.Errorf("after u-2's answer: %+v", got.record)
	}
}

// A backup's own backup follows after the backup's answer_within, and the
// chain ends at a person without one (never looping back); the request's
// deadline still ends it as expired.
func TestBackupChainThenDeadline(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	srv := servertest.Start(t, servertest.WithClock(clock), servertest.WithConfig(backupYAML("", "")))
	body := refund(1)
	body["timeout"] = "45m"
	var r record
	if code := newClient(srv.URL, "dev-main").do(t, "POST", "/v1/requests", body, nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	start := time.Now()
	clock.Set(start.Add(10*time.Minute + time.Second))
	testutil.Eventually(t, 10*time.Second, func() bool { return getMoved(t, srv.URL, r.ID).waitsOn("u-2") }, "moved to u-2")
	// u-2's answer_within runs from the move, not from the request's creation.
	clock.Set(start.Add(19 * time.Minute))
	if got := getMoved(t, srv.URL, r.ID); !got.waitsOn("u-2") {
		t.Fatalf("9m after the move: %+v", got.record)
	}
	clock.Set(time.Now().Add(20*time.Minute + 2*time.Second))
	testutil.Eventually(t, 10*time.Second, func() bool { return getMoved(t, srv.URL, r.ID).waitsOn("u-3") }, "moved on to u-2's backup u-3")
	got := getMoved(t, srv.URL, r.ID)
	if got.Revision != 2 || got.Escalation == nil || !slices.Equal(got.Escalation.Passed, []string{"u-1", "u-2"}) {
		t.Fatalf("after the second move: revision %d, escalation %+v", got.Revision, got.Escalation)
	}
	clock.Set(time.Now().Add(44 * time.Minute))
	if got := getMoved(t, srv.URL, r.ID); !got.waitsOn("u-3") || got.Revision != 2 {
		t.Fatalf("u-3 has no backup, so the request stays with u-3: %+v", got.record)
	}
	clock.Set(time.Now().Add(45*time.Minute + time.Second))
	testutil.Eventually(t, 10*time.Second, func() bool {
		got := getMoved(t, srv.URL, r.ID)
		return got.Status == "expired" && got.Decision != nil && got.Decision.By.Kind == "deadline"
	}, "the deadline ended it as expired")
	if got := getMoved(t, srv.URL, r.ID); got.Revision != 3 {
		t.Errorf("expired at revision %d, want 3 (two moves, then the deadline)", got.Revision)
	}
}

// A move that falls after the deadline never happens: the deadline ends
// the request first.
func TestBackupAfterDeadlineExpires(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	srv := servertest.Start(t, servertest.WithClock(clock), servertest.WithConfig(backupYAML("", "")))
	body := refund(1)
	body["timeout"] = "5m"
	var r record
	newClient(srv.URL, "dev-main").do(t, "POST", "/v1/requests", body, nil, &r)
	clock.Set(time.Now().Add(time.Hour))
	testutil.Eventually(t, 10*time.Second, func() bool { return getMoved(t, srv.URL, r.ID).Status == "expired" }, "expired")
	if got := getMoved(t, srv.URL, r.ID); got.Revision != 1 || got.Escalation != nil || got.Approver.ID != "u-1" {
		t.Errorf("expired record: revision %d, approver %+v, escalation %+v", got.Revision, got.Approver, got.Escalation)
	}
}

// The move's time is derived from the stored record, so a restart between
// the request's arrival and the move loses nothing: the timer re-armed by
// the new process fires at the same time.
func TestBackupMoveSurvivesRestart(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	srv := servertest.Start(t, servertest.WithClock(clock), servertest.WithConfig(backupYAML("", "")))
	var r record
	newClient(srv.URL, "dev-main").do(t, "POST", "/v1/requests", refund(1), nil, &r)
	start := time.Now()
	clock.Set(start.Add(6 * time.Minute)) // part of u-1's answer_within passes before the restart
	srv.Restart(t)
	if got := getMoved(t, srv.URL, r.ID); !got.waitsOn("u-1") {
		t.Fatalf("after the restart: %+v", got.record)
	}
	clock.Set(start.Add(10*time.Minute + time.Second))
	testutil.Eventually(t, 10*time.Second, func() bool { return getMoved(t, srv.URL, r.ID).waitsOn("u-2") }, "moved to u-2 10m after the request came, across the restart")
}

// When u-1 answers at the instant the move is due, exactly one of the two
// wins: either u-1's answer decided it (and no move follows), or the move
// did (and u-1's answer is 409). Nothing is lost either way.
func TestBackupMoveRacesTheAnswer(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	srv := servertest.Start(t, servertest.WithClock(clock), servertest.WithConfig(backupYAML("", "")))
	const n = 20
	ids := make([]string, n)
	for i := range ids {
		var r record
		newClient(srv.URL, "dev-main").do(t, "POST", "/v1/requests", refund(i), nil, &r)
		ids[i] = r.ID
	}
	codes := make([]int, n)
	var wg sync.WaitGroup
	clock.Set(time.Now().Add(10*time.Minute + time.Second))
	for i, id := range ids {
		wg.Go(func() { codes[i] = answerCode(t, srv.URL, "tok-u1", id, 0, "allow") })
	}
	wg.Wait()
	won := 0
	for i, id := range ids {
		var got moved
		testutil.Eventually(t, 10*time.Second, func() bool { got = getMoved(t, srv.URL, id); return got.Revision >= 1 }, "answered or moved")
		switch codes[i] {
		case 200:
			won++
			if got.Status != "approved" || got.Decision.By.ID != "u-1" || got.Revision != 1 || got.Escalation != nil {
				t.Errorf("%s: u-1's answer won but the record is %+v, escalation %+v", id, got.record, got.Escalation)
			}
		case 409:
			if !got.waitsOn("u-2") || got.Revision != 1 || got.Escalation == nil {
				t.Errorf("%s: the move won but the record is %+v", id, got.record)
			}
		default:
			t.Errorf("%s: u-1's answer: %d", id, codes[i])
		}
	}
	t.Logf("u-1's answer won %d of %d races with the move", won, n)
}

// With two deciders processes on one NATS, a request's move is armed in
// one of them and made once: one request.escalated event.
func TestBackupMovedOnceAcrossDeciders(t *testing.T) {
	url := startExternalNATS(t)
	start := time.Now()
	withBackups := func(cfg *config.Config) {
		c, err := config.Parse([]byte(backupYAML("", "")))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tenants = c.Tenants
	}
	api := startRoleOn(t, url, testutil.NewClock(start), withBackups, "api")
	clocks := []*testutil.Clock{testutil.NewClock(start), testutil.NewClock(start)}
	for _, c := range clocks {
		startRoleOn(t, url, c, withBackups, "deciders")
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	escalated := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe("countersign.demo.events.>", escalated)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	work, err := nc.SubscribeSync("countersign.demo.decide.person.u-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	base := "http://" + api.Addr()
	var r record
	if code := newClient(base, "dev-main").do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return clocks[0].Waiting()+clocks[1].Waiting() == 1 },
		"the request's timer armed in exactly one deciders process")
	now := time.Now().Add(10*time.Minute + time.Second)
	for _, c := range clocks {
		c.Set(now)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return getMoved(t, base, r.ID).waitsOn("u-2") }, "moved to u-2")
	// u-2's own move, 10m later, is armed again in one process.
	testutil.Eventually(t, 20*time.Second, func() bool { return clocks[0].Waiting()+clocks[1].Waiting() == 1 },
		"u-2's move armed in exactly one deciders process")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var types []string
	for len(types) < 2 {
		select {
		case m := <-escalated:
			types = append(types, m.Header.Get("ce-type"))
		case <-ctx.Done():
			t.Fatalf("events of the request: %v", types)
		}
	}
	if got := getMoved(t, base, r.ID); got.Revision != 1 ||
		!slices.Equal(types, []string{"dev.countersign.request.created", "dev.countersign.request.escalated"}) {
		t.Fatalf("revision %d, events %v: want one move", got.Revision, types)
	}
	// The backup is told on their work subject, as any new decider is.
	m, err := work.NextMsg(10 * time.Second)
	if err != nil || m.Header.Get("ce-type") != "dev.countersign.request.escalated" || m.Header.Get("ce-subject") != r.ID {
		t.Fatalf("u-2's work subject: %v %v", m, err)
	}
}

// kill -9 between a request's arrival and its move loses nothing: the
// restarted process re-arms the move from the stored record and makes it
// (on the system clock, with a 5s answer_within).
func TestBackupMoveAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	bin, dir, addr := buildBinary(t), t.TempDir(), freeAddr(t)
	yaml := strings.ReplaceAll(backupYAML("", ""), "answer_within: 10m", "answer_within: 5s")
	start := func() *exec.Cmd { return serveProcess(t, bin, dir, addr, yaml) }
	cmd := start()
	base := "http://" + addr
	var r record
	if code := newClient(base, "dev-main").do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	if got := getMoved(t, base, r.ID); !got.waitsOn("u-1") || got.Revision != 0 {
		t.Fatalf("before the kill: %+v", got.record)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	start()
	testutil.Eventually(t, 30*time.Second, func() bool {
		got := getMoved(t, base, r.ID)
		return got.Escalation != nil && len(got.Escalation.Passed) > 0 && got.Escalation.Passed[0] == "u-1"
	}, "the restarted process moved the request on from u-1")
}
