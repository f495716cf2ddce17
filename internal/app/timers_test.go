package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// With several deciders processes on one NATS, each pending deadline is
// armed in one of them (each process has a clock of its own here, so that
// its armed timers can be counted), shared out; when a process stops, the
// others arm its share, and every deadline still fires.
func TestDeadlinesArmedOnceAcrossDeciders(t *testing.T) {
	url := startExternalNATS(t)
	start := time.Now()
	apiClock := testutil.NewClock(start)
	api := startRoleOn(t, url, apiClock, func(*config.Config) {}, "api")
	clocks := []*testutil.Clock{testutil.NewClock(start), testutil.NewClock(start), testutil.NewClock(start)}
	procs := make([]*app.App, len(clocks))
	for i, c := range clocks {
		procs[i] = startRoleOn(t, url, c, func(*config.Config) {}, "deciders")
	}
	armed := func(live int) (each []int, total int) {
		for _, c := range clocks[:live] {
			each = append(each, c.Waiting())
			total += each[len(each)-1]
		}
		return each, total
	}

	const n = 60
	ids := make([]string, n)
	main := newClient("http://"+api.Addr(), "dev-main")
	for i := range ids {
		var r record
		if code := main.do(t, "POST", "/v1/requests", refund(i), nil, &r); code != 201 || r.Status != "pending" {
			t.Fatalf("submit %d: %d %s", i, code, r.Status)
		}
		ids[i] = r.ID
	}
	for live := len(procs); live >= 1; live-- {
		testutil.Eventually(t, 30*time.Second, func() bool {
			each, total := armed(live)
			for _, e := range each {
				if e == 0 && live > 1 {
					return false
				}
			}
			return total == n
		}, "each of the pending deadlines armed in exactly one of the live deciders processes")
		each, _ := armed(live)
		t.Logf("%d deciders processes: %v timers armed for %d pending requests", live, each, n)
		if live > 1 {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_ = procs[live-1].Shutdown(ctx) // its share moves to the others
			cancel()
		}
	}
	for _, c := range append(clocks, apiClock) {
		c.Advance(time.Hour + time.Second)
	}
	for _, id := range ids {
		testutil.Eventually(t, 20*time.Second, func() bool {
			var r record
			main.do(t, "GET", "/v1/requests/"+id, nil, nil, &r)
			return r.Status == "expired"
		}, "every request expired at its deadline, the stopped processes' shares too")
	}
}

// On the system clock, two deciders processes expire each request within
// a second of its deadline (the figure in deciders/doc.go).
func TestDeadlineToExpiryWithTwoDeciders(t *testing.T) {
	url := startExternalNATS(t)
	api := startRole(t, url, "api")
	startRole(t, url, "deciders")
	startRole(t, url, "deciders")
	main := newClient("http://"+api.Addr(), "dev-main")
	const n = 20
	ids := make([]string, n)
	for i := range ids {
		body := refund(i)
		body["timeout"] = "1s"
		var r record
		if code := main.do(t, "POST", "/v1/requests", body, nil, &r); code != 201 {
			t.Fatalf("submit %d: %d", i, code)
		}
		ids[i] = r.ID
	}
	var worst, sum time.Duration
	for _, id := range ids {
		var r struct {
			Status     string    `json:"status"`
			DeadlineAt time.Time `json:"deadline_at"`
			Decision   *struct {
				DecidedAt time.Time `json:"decided_at"`
			} `json:"decision"`
		}
		testutil.Eventually(t, 10*time.Second, func() bool {
			main.do(t, "GET", "/v1/requests/"+id, nil, nil, &r)
			return r.Status == "expired"
		}, "the request expired")
		late := r.Decision.DecidedAt.Sub(r.DeadlineAt)
		if late < 0 || late > time.Second {
			t.Errorf("%s expired %s after its deadline, want within a second", id, late)
		}
		worst, sum = max(worst, late), sum+late
	}
	t.Logf("deadline to expiry with two deciders processes: mean %s, worst %s over %d requests", sum/n, worst, n)
}
