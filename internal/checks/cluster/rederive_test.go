//go:build cluster

package cluster

import (
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
)

// Pending work is re-derived after a restart of every deciders process and
// of a NATS node (SPEC §4: a timer worker that recovers its timers on
// start). Requests whose deadline passes while no deciders process runs
// expire once one is back; requests whose deadline comes after the restart
// expire at it, not before; requests waiting on a person still wait and can
// be answered. Each gets exactly one terminal event.
func TestClusterRederivesPendingWork(t *testing.T) {
	c := startCluster(t)
	nc, js := c.connect(t)
	api := startCountersign(t, c, "api-1", "api")
	decs := []*csProcess{startCountersign(t, c, "deciders-1", "deciders"), startCountersign(t, c, "deciders-2", "deciders")}
	l := newLedger()
	d := newDriver(l, api.addr)

	const n = 8
	early, late, waiting := submitExpiring(t, d, n, "6s"), submitExpiring(t, d, n, "25s"), []string{}
	for i := range 3 {
		id, ok := d.pendingOnPerson("person", i, "approved")
		if !ok {
			t.Fatal("could not set up a request waiting on the person")
		}
		waiting = append(waiting, id)
	}

	node := c.node(t, leaderOf(t, js, requestsStream))
	for _, p := range decs {
		p.Kill()
	}
	node.Kill()
	last := latestDeadline(t, d, early)
	time.Sleep(time.Until(last.Add(time.Second)))
	for _, id := range early {
		if r, _ := d.get(id, ""); r.Status != "pending" {
			t.Fatalf("%s is %s with no deciders process running, want pending", id, r.Status)
		}
	}

	restarted := time.Now()
	node.Start()
	node.WaitHealthy(t, 60*time.Second)
	natsBack := time.Since(restarted)
	for _, p := range decs {
		p.restart()
	}
	ready := time.Now()
	testutil.Eventually(t, 60*time.Second, func() bool { return allExpired(d, early) }, "requests past their deadline expire after the restart")
	recovered := time.Since(ready)

	var lateBy time.Duration
	testutil.Eventually(t, 60*time.Second, func() bool { return allExpired(d, late) }, "requests due after the restart expire")
	for _, id := range late {
		r, _ := d.get(id, "")
		if r.Decision.DecidedAt.Before(r.DeadlineAt) {
			t.Errorf("%s expired at %v, before its deadline %v", id, r.Decision.DecidedAt, r.DeadlineAt)
		}
		lateBy = max(lateBy, r.Decision.DecidedAt.Sub(r.DeadlineAt))
	}
	for _, id := range waiting {
		if code, r := d.answer(0, tokPerson, id, 1, "allow"); code != 200 || r.Status != "approved" {
			t.Errorf("%s after the restart: answer %d %s, want 200 approved", id, code, r.Status)
		}
	}
	checkOutcomes(t, c, nc, d)
	checkEvents(t, js, l)
	for _, p := range l.problems {
		t.Error(p)
	}
	t.Logf("killed %s and both deciders processes with %d requests pending; %s healthy %v after its restart, both deciders processes ready %v later; the %d requests past their deadline expired %v after the deciders were ready; the %d due later expired at most %v after their deadline",
		node.Name, len(early)+len(late)+len(waiting), node.Name, natsBack.Round(time.Millisecond), ready.Sub(restarted.Add(natsBack)).Round(time.Millisecond), len(early), recovered.Round(time.Millisecond), len(late), lateBy.Round(time.Millisecond))
}

// submitExpiring submits n requests that nobody answers, with timeout.
func submitExpiring(t *testing.T, d *driver, n int, timeout string) []string {
	t.Helper()
	var ids []string
	for i := range n {
		r, ok := d.submit(tokSub, call("issue_refund", i, timeout))
		if !ok || r.Status != "pending" {
			t.Fatalf("submit: %v %s", ok, r.Status)
		}
		d.l.add(&tracked{id: r.ID, kind: "expire", want: "expired", wantBy: "deadline"})
		ids = append(ids, r.ID)
	}
	return ids
}

func latestDeadline(t *testing.T, d *driver, ids []string) time.Time {
	t.Helper()
	var last time.Time
	for _, id := range ids {
		r, ok := d.get(id, "")
		if !ok {
			t.Fatalf("%s: not readable", id)
		}
		if r.DeadlineAt.After(last) {
			last = r.DeadlineAt
		}
	}
	return last
}

func allExpired(d *driver, ids []string) bool {
	for _, id := range ids {
		var r record
		if d.clients[0][tokPerson].do("GET", "/v1/requests/"+id, nil, nil, &r) != 200 || r.Status != "expired" {
			return false
		}
		d.l.observe(r)
	}
	return true
}
