package deciders_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// A deciders process killed while holding deadlines (here a member that
// announced itself and then never put its key again, as a killed process
// would) does not leave its requests pending: once its key ages out, the
// live process arms its share, and every deadline fires.
func TestDeadMembersDeadlinesFireInTheLiveOne(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ttl = time.Second
	g, err := deciders.NewGroup(ctx, deciders.GroupConfig{JS: f.store.JetStream(), TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := f.store.JetStream().KeyValue(ctx, deciders.BucketDeciders)
	if err != nil {
		t.Fatal(err)
	}
	dead, _ := json.Marshal(map[string]time.Time{"at": time.Now()})
	if _, err := kv.Put(ctx, "killed", dead); err != nil {
		t.Fatal(err)
	}
	clock := testutil.NewClock(time.Now())
	acts := &recorded{expired: map[domain.RequestID]int{}}
	tm, err := deciders.NewTimers(deciders.TimersConfig{Views: f.views, Act: acts, Group: g, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Run(ctx) }()
	go func() { _ = tm.Run(ctx) }()
	testutil.Eventually(t, 10*time.Second, func() bool { return g.Size() == 2 }, "the killed member counted live while its key lives")

	const n = 40
	for i := range n {
		r := req("prog", "tools.call", "deploy", "", "tool")
		r.ID, r.Status, r.DeadlineAt = domain.RequestID(fmt.Sprintf("req_%d", i)), domain.StatusPending, clock.Now().Add(time.Hour)
		r.Approver = &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
		tm.Observe(kvstate.RequestKey("acme", r.ID), kvstate.Record{Request: *r}, false)
	}
	if got := clock.Waiting(); got == 0 || got == n {
		t.Fatalf("%d of %d deadlines armed with the killed member still live, want this process's share", got, n)
	}
	died := time.Now()
	testutil.Eventually(t, 10*time.Second, func() bool { return clock.Waiting() == n }, "the killed member's share armed here")
	t.Logf("the killed member's share re-armed %s after its key's last put (TTL %s)", time.Since(died).Round(10*time.Millisecond), ttl)

	clock.Advance(time.Hour)
	testutil.Eventually(t, 10*time.Second, func() bool { return acts.count() == n }, "every deadline fired")
	acts.mu.Lock()
	defer acts.mu.Unlock()
	for id, k := range acts.expired {
		if k != 1 {
			t.Errorf("%s expired %d times", id, k)
		}
	}
}

// Two members share the deadlines, each armed in one; when one stops (and
// deletes its key), the other arms its share at once.
func TestMembersShareDeadlines(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type proc struct {
		g     *deciders.Group
		clock *testutil.Clock
		tm    *deciders.Timers
		stop  context.CancelFunc
		done  chan struct{}
	}
	procs := make([]*proc, 2)
	for i := range procs {
		g, err := deciders.NewGroup(ctx, deciders.GroupConfig{JS: f.store.JetStream()})
		if err != nil {
			t.Fatal(err)
		}
		clock := testutil.NewClock(time.Now())
		tm, err := deciders.NewTimers(deciders.TimersConfig{Views: f.views, Act: noActions{}, Group: g, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		pctx, stop := context.WithCancel(ctx)
		p := &proc{g: g, clock: clock, tm: tm, stop: stop, done: make(chan struct{})}
		go func() { _ = tm.Run(pctx) }()
		go func() { defer close(p.done); _ = g.Run(pctx) }()
		procs[i] = p
	}
	for _, p := range procs {
		testutil.Eventually(t, 10*time.Second, func() bool { return p.g.Size() == 2 }, "each member sees both")
	}
	const n = 40
	for i := range n {
		r := req("prog", "tools.call", "deploy", "", "tool")
		r.ID, r.Status, r.DeadlineAt = domain.RequestID(fmt.Sprintf("req_%d", i)), domain.StatusPending, time.Now().Add(time.Hour)
		r.Approver = &domain.Ref{Kind: domain.KindPerson, ID: "u-1"}
		for _, p := range procs {
			p.tm.Observe(kvstate.RequestKey("acme", r.ID), kvstate.Record{Request: *r}, false)
		}
	}
	a, b := procs[0].clock.Waiting(), procs[1].clock.Waiting()
	if a+b != n || a == 0 || b == 0 {
		t.Fatalf("armed %d and %d of %d deadlines, want each once, shared", a, b, n)
	}
	procs[1].stop()
	<-procs[1].done
	testutil.Eventually(t, 10*time.Second, func() bool { return procs[0].clock.Waiting() == n }, "the stopped member's share armed in the other")
}

// recorded counts the expiries.
type recorded struct {
	noActions
	mu      sync.Mutex
	expired map[domain.RequestID]int
}

func (r *recorded) Expire(_ context.Context, _ domain.TenantID, id domain.RequestID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expired[id]++
	return nil
}

func (r *recorded) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.expired)
}

// RunOwned runs its work in one member of two at a time (the one that
// owns the key); when that member stops, the work runs in the other.
func TestRunOwnedRunsInOneMember(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	running := map[int]bool{}
	runningIn := func() []int {
		mu.Lock()
		defer mu.Unlock()
		var in []int
		for i, on := range running {
			if on {
				in = append(in, i)
			}
		}
		return in
	}
	type proc struct {
		g    *deciders.Group
		stop context.CancelFunc
		done chan struct{}
	}
	procs := make([]*proc, 2)
	for i := range procs {
		g, err := deciders.NewGroup(ctx, deciders.GroupConfig{JS: f.store.JetStream()})
		if err != nil {
			t.Fatal(err)
		}
		pctx, stop := context.WithCancel(ctx)
		p := &proc{g: g, stop: stop, done: make(chan struct{})}
		go func() { defer close(p.done); _ = g.Run(pctx) }()
		go func() {
			_ = g.RunOwned(pctx, "audit", func(ctx context.Context) error {
				mu.Lock()
				running[i] = true
				mu.Unlock()
				<-ctx.Done()
				mu.Lock()
				running[i] = false
				mu.Unlock()
				return nil
			})
		}()
		procs[i] = p
	}
	for _, p := range procs {
		testutil.Eventually(t, 10*time.Second, func() bool { return p.g.Size() == 2 }, "each member sees both")
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(runningIn()) == 1 }, "the work running in one member")
	owner := runningIn()[0]
	procs[owner].stop()
	<-procs[owner].done
	testutil.Eventually(t, 10*time.Second, func() bool { in := runningIn(); return len(in) == 1 && in[0] != owner },
		"the work running in the other member once the owner stopped")
}
