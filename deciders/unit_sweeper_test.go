package deciders_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go/jetstream"
)

// sweepFixture is a real JetStream with the KV state's buckets, a stepped
// clock, and removals that delete the key if its revision is still the
// one the sweeper names (the guard RemoveRequest and RemoveGrant keep),
// recording each call.
type sweepFixture struct {
	js       jetstream.JetStream
	requests jetstream.KeyValue
	grants   jetstream.KeyValue
	clock    *testutil.Clock
	mu       sync.Mutex
	tenants  []*domain.Tenant
	removed  []string // "request acme.req_a@3", "grant acme.g-1@2"
}

var sweepStart = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func newSweepFixture(t *testing.T, tenants ...*domain.Tenant) *sweepFixture {
	t.Helper()
	ctx := context.Background()
	js := testutil.NewJetStream(t).JS
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: js, Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	requests, err := js.KeyValue(ctx, kvstate.RequestBucket(0))
	if err != nil {
		t.Fatal(err)
	}
	grants, err := js.KeyValue(ctx, kvstate.BucketGrants)
	if err != nil {
		t.Fatal(err)
	}
	return &sweepFixture{js: js, requests: requests, grants: grants, clock: testutil.NewClock(sweepStart), tenants: tenants}
}

func (f *sweepFixture) Tenants() []*domain.Tenant {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*domain.Tenant(nil), f.tenants...)
}

func (f *sweepFixture) setTenants(ts ...*domain.Tenant) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tenants = ts
}

func (f *sweepFixture) Removed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.removed...)
}

func (f *sweepFixture) note(what string, kv jetstream.KeyValue, key string, rev uint64) error {
	f.mu.Lock()
	f.removed = append(f.removed, what+" "+key+"@"+itoa(rev))
	f.mu.Unlock()
	err := kv.Delete(context.Background(), key, jetstream.LastRevision(rev))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return nil // written since: not this removal's to make
	}
	return err
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func (f *sweepFixture) Expire(context.Context, domain.TenantID, domain.RequestID) error { return nil }
func (f *sweepFixture) PassUp(context.Context, domain.TenantID, domain.RequestID, domain.Ref, uint64) error {
	return nil
}
func (f *sweepFixture) MoveToBackup(context.Context, domain.TenantID, domain.RequestID, domain.Ref, uint64) error {
	return nil
}
func (f *sweepFixture) RemoveRequest(_ context.Context, tenant domain.TenantID, id domain.RequestID, rev uint64) error {
	return f.note("request", f.requests, kvstate.RequestKey(tenant, id), rev)
}
func (f *sweepFixture) RemoveGrant(_ context.Context, tenant domain.TenantID, id domain.GrantID, rev uint64) error {
	return f.note("grant", f.grants, kvstate.GrantKey(tenant, id), rev)
}

// putRequest stores a request's status, decided at decidedAt when it is
// not the zero time, and returns its KV revision.
func (f *sweepFixture) putRequest(t *testing.T, tenant domain.TenantID, id string, status domain.Status, decidedAt time.Time) uint64 {
	t.Helper()
	r := map[string]any{"id": id, "tenant": tenant, "status": status}
	if !decidedAt.IsZero() {
		r["decision"] = map[string]any{"decided_at": decidedAt}
	}
	return f.put(t, f.requests, kvstate.RequestKey(tenant, domain.RequestID(id)), r)
}

// putGrant stores a grant, revoked at revokedAt when it is not the zero
// time, and returns its KV revision.
func (f *sweepFixture) putGrant(t *testing.T, tenant domain.TenantID, id string, revokedAt time.Time) uint64 {
	t.Helper()
	g := map[string]any{"id": id, "tenant": tenant}
	if !revokedAt.IsZero() {
		g["revoked_at"] = revokedAt
	}
	return f.put(t, f.grants, kvstate.GrantKey(tenant, domain.GrantID(id)), g)
}

func (f *sweepFixture) put(t *testing.T, kv jetstream.KeyValue, key string, v any) uint64 {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := kv.Put(context.Background(), key, data)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// run starts a sweeper on the fixture until the test ends.
func (f *sweepFixture) run(t *testing.T) *deciders.Sweeper {
	t.Helper()
	s, err := deciders.NewSweeper(deciders.SweeperConfig{JS: f.js, Tenants: f.Tenants, Act: f, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v when its context ended, want nil", err)
		}
	})
	return s
}

// waitFor waits until the sweeper is waiting on n removals' times.
func (f *sweepFixture) waitFor(t *testing.T, n int, what string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() bool { return f.clock.Waiting() == n }, what)
}

func retained(id domain.TenantID, d time.Duration) *domain.Tenant {
	return &domain.Tenant{ID: id, RequestRetention: d}
}

// A terminal request is removed its tenant's retention after it was
// decided, not a moment before, naming the revision of the write that
// ended it; a pending request (even one carrying a decision), and a
// terminal one without a decision, are never due.
func TestSweeperRemovesATerminalRequestWhenItsRetentionEnds(t *testing.T) {
	f := newSweepFixture(t, retained("acme", time.Hour))
	f.putRequest(t, "acme", "req_pending", domain.StatusPending, time.Time{})
	f.putRequest(t, "acme", "req_reopened", domain.StatusPending, sweepStart.Add(-48*time.Hour))
	f.putRequest(t, "acme", "req_nodecision", domain.StatusApproved, time.Time{})
	rev := f.putRequest(t, "acme", "req_a", domain.StatusApproved, sweepStart)
	f.run(t)

	f.waitFor(t, 1, "the sweeper waits on req_a's retention")
	f.clock.Advance(time.Hour - time.Second)
	if got := f.Removed(); len(got) != 0 {
		t.Fatalf("removed before the retention ended: %v", got)
	}
	f.clock.Advance(time.Second)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.Removed()) == 1 }, "req_a removed at its retention's end")
	if got, want := f.Removed()[0], "request acme.req_a@"+itoa(rev); got != want {
		t.Errorf("removed %q, want %q", got, want)
	}
	// The removal's delete marker is read next, and is never due: the
	// sweeper waits on nothing more.
	f.waitFor(t, 0, "nothing more to wait on")
	if got := f.Removed(); len(got) != 1 {
		t.Errorf("removed %v, want only req_a (pending and undecided records stay)", got)
	}
	if _, err := f.requests.Get(context.Background(), "acme.req_pending"); err != nil {
		t.Errorf("the pending request is gone: %v", err)
	}
}

// Requests that ended long ago are removed at once, in the order they
// ended; one that ended later waits its own retention.
func TestSweeperRemovesOverdueRequestsAtOnceInOrder(t *testing.T) {
	f := newSweepFixture(t, retained("acme", time.Hour))
	f.putRequest(t, "acme", "req_old1", domain.StatusDenied, sweepStart.Add(-3*time.Hour))
	f.putRequest(t, "acme", "req_old2", domain.StatusExpired, sweepStart.Add(-2*time.Hour))
	f.putRequest(t, "acme", "req_new", domain.StatusApproved, sweepStart.Add(-time.Minute))
	f.run(t)

	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.Removed()) == 2 }, "the two overdue requests removed")
	f.waitFor(t, 1, "the sweeper waits on req_new")
	got := f.Removed()
	if got[0][:len("request acme.req_old1")] != "request acme.req_old1" || got[1][:len("request acme.req_old2")] != "request acme.req_old2" {
		t.Errorf("removed %v, want req_old1 then req_old2", got)
	}
	f.clock.Advance(59 * time.Minute)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.Removed()) == 3 }, "req_new removed an hour after it ended")
}

// A tenant without retention keeps its records: nothing of it is read,
// nothing waits.
func TestSweeperLeavesATenantWithoutRetention(t *testing.T) {
	f := newSweepFixture(t, retained("keep", 0), retained("acme", time.Hour))
	f.putRequest(t, "keep", "req_k", domain.StatusApproved, sweepStart.Add(-48*time.Hour))
	f.putGrant(t, "keep", "g-k", sweepStart.Add(-48*time.Hour))
	f.putRequest(t, "acme", "req_a", domain.StatusApproved, sweepStart.Add(-48*time.Hour))
	f.run(t)

	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.Removed()) == 1 }, "acme's request removed")
	f.waitFor(t, 0, "nothing waits")
	if got := f.Removed(); got[0][:len("request acme.")] != "request acme." {
		t.Errorf("removed %v, want only acme's request", got)
	}
}

// A revoked grant is removed the retention after its revocation; a grant
// not revoked is never due.
func TestSweeperRemovesARevokedGrantAfterRetention(t *testing.T) {
	f := newSweepFixture(t, retained("acme", time.Hour))
	f.putGrant(t, "acme", "g-live", time.Time{})
	rev := f.putGrant(t, "acme", "g-gone", sweepStart.Add(-30*time.Minute))
	f.run(t)

	f.waitFor(t, 1, "the sweeper waits on g-gone's retention")
	f.clock.Advance(29 * time.Minute)
	if got := f.Removed(); len(got) != 0 {
		t.Fatalf("removed before the retention ended: %v", got)
	}
	f.clock.Advance(time.Minute)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.Removed()) == 1 }, "g-gone removed")
	if got, want := f.Removed()[0], "grant acme.g-gone@"+itoa(rev); got != want {
		t.Errorf("removed %q, want %q", got, want)
	}
	if _, err := f.grants.Get(context.Background(), "acme.g-live"); err != nil {
		t.Errorf("the live grant is gone: %v", err)
	}
}

// A request written again after it ended is removed only by the removal
// of its latest write: the first removal names the old revision, which
// the guard refuses, and the record stays until its new retention ends.
func TestSweeperRemovalNamesTheWriteThatEndedIt(t *testing.T) {
	f := newSweepFixture(t, retained("acme", time.Hour))
	old := f.putRequest(t, "acme", "req_a", domain.StatusApproved, sweepStart.Add(-2*time.Hour))
	latest := f.putRequest(t, "acme", "req_a", domain.StatusApproved, sweepStart)
	f.run(t)

	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.Removed()) == 1 }, "the first write's removal")
	if got, want := f.Removed()[0], "request acme.req_a@"+itoa(old); got != want {
		t.Fatalf("removed %q, want %q", got, want)
	}
	if _, err := f.requests.Get(context.Background(), "acme.req_a"); err != nil {
		t.Fatalf("the record rewritten since was removed by its old write: %v", err)
	}
	f.waitFor(t, 1, "the sweeper waits on the latest write")
	f.clock.Advance(time.Hour)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.Removed()) == 2 }, "the latest write's removal")
	if got, want := f.Removed()[1], "request acme.req_a@"+itoa(latest); got != want {
		t.Errorf("removed %q, want %q", got, want)
	}
}

// After Reconfigured the sweeper reads the running tenants again: a
// tenant given a retention is swept from the start of its writes, and a
// tenant swept before resumes after the last write it handled (its
// removals are not made twice).
func TestSweeperReconfiguredSweepsATenantAdded(t *testing.T) {
	f := newSweepFixture(t, retained("acme", time.Hour))
	f.putRequest(t, "acme", "req_done", domain.StatusApproved, sweepStart.Add(-2*time.Hour))
	f.putRequest(t, "acme", "req_later", domain.StatusApproved, sweepStart)
	f.putRequest(t, "beta", "req_b", domain.StatusApproved, sweepStart.Add(-2*time.Hour))
	s := f.run(t)

	f.waitFor(t, 1, "acme waits on req_later")
	if got := f.Removed(); len(got) != 1 {
		t.Fatalf("removed %v, want acme's req_done alone (beta is not configured)", got)
	}
	f.setTenants(retained("acme", time.Hour), retained("beta", time.Hour))
	s.Reconfigured()
	testutil.Eventually(t, 10*time.Second, func() bool { return len(f.Removed()) >= 2 }, "beta's request removed after the reload")
	f.waitFor(t, 1, "acme waits on req_later again")
	if got := f.Removed(); len(got) != 2 {
		t.Errorf("removed %v, want req_done once and req_b", got)
	}
}

// NewSweeper refuses a config it cannot run with.
func TestNewSweeperValidates(t *testing.T) {
	f := newSweepFixture(t)
	for name, cfg := range map[string]deciders.SweeperConfig{
		"no JetStream": {Tenants: f.Tenants, Act: f},
		"no tenants":   {JS: f.js, Act: f},
		"no removal":   {JS: f.js, Tenants: f.Tenants},
	} {
		if _, err := deciders.NewSweeper(cfg); !errors.Is(err, deciders.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}
