package judge

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is the breaker's clock in tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// breakerJudge returns a judge with a 5s timeout (failures in these tests
// are HTTP errors, which a loaded machine cannot turn into timeouts), a breaker of two
// failures and a one-minute cooldown on a fake clock.
func breakerJudge(srv *chatServer) (*Judge, *fakeClock) {
	cfg := srv.config()
	cfg.Timeout = 5 * time.Second
	cfg.BreakerFailures = 2
	cfg.BreakerCooldown = time.Minute
	j := New(cfg)
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	j.breaker.now = clock.Now
	return j, clock
}

func judgeOnce(j *Judge) Outcome {
	return j.Judge(context.Background(), refundRules, refundCall(smallRefund))
}

func TestBreakerOpensAndHalfOpens(t *testing.T) {
	var healthy atomic.Bool
	gate := make(chan struct{})
	srv := newChatServer(t, func(n int, _ apiRequest) reply {
		if !healthy.Load() {
			return reply{status: 503, errMsg: "overloaded"}
		}
		if n == 2 {
			<-gate // hold the half-open trial
		}
		return reply{content: modelAnswer("allow", ruleRefund, []string{"42.50"}, "")}
	})
	j, clock := breakerJudge(srv)

	for range 2 {
		checkOutcome(t, judgeOnce(j), Escalate, ReasonHTTPError, "")
	}
	checkOutcome(t, judgeOnce(j), Escalate, ReasonCircuitOpen, "")
	if srv.count() != 2 { // the open breaker did not call the model
		t.Fatalf("the server saw %d calls; want 2", srv.count())
	}

	clock.Advance(time.Minute)
	healthy.Store(true)
	trial := make(chan Outcome)
	go func() { trial <- judgeOnce(j) }()
	eventually(t, func() bool { return srv.count() == 3 }, "the half-open trial call")
	checkOutcome(t, judgeOnce(j), Escalate, ReasonCircuitOpen, "") // one trial at a time
	close(gate)
	checkOutcome(t, <-trial, Allow, ReasonVerified, "rul_refund")

	checkOutcome(t, judgeOnce(j), Allow, ReasonVerified, "rul_refund") // closed again
	if srv.count() != 4 {
		t.Errorf("server saw %d calls, want 4", srv.count())
	}
}

func TestBreakerFailedTrialReopens(t *testing.T) {
	srv := newChatServer(t, func(int, apiRequest) reply { return reply{status: 503, errMsg: "overloaded"} })
	j, clock := breakerJudge(srv)
	for range 2 {
		checkOutcome(t, judgeOnce(j), Escalate, ReasonHTTPError, "")
	}
	checkOutcome(t, judgeOnce(j), Escalate, ReasonCircuitOpen, "")

	clock.Advance(time.Minute)
	checkOutcome(t, judgeOnce(j), Escalate, ReasonHTTPError, "")   // the trial fails
	checkOutcome(t, judgeOnce(j), Escalate, ReasonCircuitOpen, "") // open again at once
	if srv.count() != 3 {
		t.Errorf("server saw %d calls, want 3", srv.count())
	}
}

func TestBreakerIgnoresAnswersAndCallerCancel(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := newChatServer(t, func(n int, _ apiRequest) reply {
		if n%2 == 0 {
			return reply{content: "not json"} // a bad answer is not an endpoint failure
		}
		arrived <- struct{}{}
		return reply{delay: 5 * time.Second}
	})
	j, _ := breakerJudge(srv)
	j.cfg.Timeout = 5 * time.Second
	for i := range 6 {
		ctx, cancel := context.WithCancel(context.Background())
		if i%2 == 1 {
			go func() { <-arrived; cancel() }()
		}
		got := j.Judge(ctx, refundRules, refundCall(smallRefund))
		cancel()
		if want := []string{ReasonMalformed, ReasonTimeout}[i%2]; got.Reason != want {
			t.Fatalf("call %d: reason %s, want %s (the breaker must not open)", i, got.Reason, want)
		}
	}
}

func TestBreakerUnit(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	b := newBreaker(1, time.Second)
	b.now = clock.Now
	if trial, ok := b.allow(); trial || !ok {
		t.Fatalf("closed breaker: allow = %v, %v", trial, ok)
	}
	b.record(false, true)
	if _, ok := b.allow(); ok {
		t.Fatal("open breaker let a call through")
	}
	clock.Advance(time.Second)
	if trial, ok := b.allow(); !trial || !ok {
		t.Fatalf("after cooldown: allow = %v, %v; want the trial", trial, ok)
	}
	b.record(true, false)
	if trial, ok := b.allow(); trial || !ok {
		t.Fatalf("after a good trial: allow = %v, %v; want closed", trial, ok)
	}
}
