package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/prometheus/client_golang/prometheus"
)

// Tests of the use cases themselves, on a real JetStream, with a clock the
// test steps: no timers run here, so a rule about time is tested at the
// exact instant it names.

const tenantYAML = `tenants:
  - id: acme
    request_timeout: 1h
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents:
      - {id: agt_main, member: u-1}
`

type fixture struct {
	svc    *approvals.Service
	store  *kvstate.Store
	clock  *testutil.Clock
	agent  approvals.Caller
	person approvals.Caller
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, views, tenants := testutil.NewState(t, tenantYAML)
	tenants[0].RequestRetention = 24 * time.Hour
	clk := testutil.NewClock(time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC))
	svc, err := approvals.New(approvals.Config{Store: store, Views: views, Checker: newChecker(views), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	caller := func(kind, id string, scopes ...string) approvals.Caller {
		p := domain.Ref{Kind: kind, ID: id}
		return approvals.Caller{Tenant: tenants[0], Principal: p, Token: domain.Token{Principal: p, Scopes: scopes}}
	}
	return &fixture{svc: svc, store: store, clock: clk,
		agent:  caller(domain.KindAgent, "agt_main", domain.ScopeRequestsWrite),
		person: caller(domain.KindPerson, "u-1", domain.ScopeApprovalsRead, domain.ScopeApprovalsWrite)}
}

func (f *fixture) submit(t *testing.T, timeout string) kvstate.Record {
	t.Helper()
	rec, _, err := f.svc.Submit(context.Background(), f.agent, approvals.SubmitInput{Tool: "deploy",
		Arguments: json.RawMessage(`{"env":"prod"}`), Timeout: timeout}, "", "")
	if err != nil || rec.Status != domain.StatusPending {
		t.Fatalf("submit: %v %+v", err, rec.Request)
	}
	return rec
}

// An answer or cancel of a still-pending request at or after deadline_at
// is a conflict and changes nothing (SPEC §4); a moment before, it is not.
func TestNoAnswerOrCancelAtTheDeadline(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zero := uint64(0)
	allow := approvals.AnswerInput{Expected: &zero, Decision: approvals.DecisionAllow}

	rec := f.submit(t, "10s")
	f.clock.Set(rec.DeadlineAt)
	if _, err := f.svc.Answer(ctx, f.person, rec.ID, allow); !errors.Is(err, approvals.ErrConflict) {
		t.Errorf("answer at deadline_at: %v, want ErrConflict", err)
	}
	if _, err := f.svc.Cancel(ctx, f.agent, rec.ID); !errors.Is(err, approvals.ErrConflict) {
		t.Errorf("cancel at deadline_at: %v, want ErrConflict", err)
	}
	f.clock.Set(rec.DeadlineAt.Add(time.Hour))
	if _, err := f.svc.Answer(ctx, f.person, rec.ID, allow); !errors.Is(err, approvals.ErrConflict) {
		t.Errorf("answer after deadline_at: %v, want ErrConflict", err)
	}
	if got, err := f.svc.Get(ctx, f.person, rec.ID); err != nil || got.Status != domain.StatusPending || got.Revision != 0 {
		t.Errorf("after refused answers: %v %s rev %d, want pending at 0", err, got.Status, got.Revision)
	}

	early := f.submit(t, "10s")
	f.clock.Set(early.DeadlineAt.Add(-time.Nanosecond))
	if got, err := f.svc.Answer(ctx, f.person, early.ID, allow); err != nil || got.Status != domain.StatusApproved {
		t.Errorf("answer a moment before deadline_at: %v %s", err, got.Status)
	}
	late := f.submit(t, "10s")
	f.clock.Set(late.DeadlineAt.Add(-time.Nanosecond))
	if got, err := f.svc.Cancel(ctx, f.agent, late.ID); err != nil || got.Status != domain.StatusCancelled {
		t.Errorf("cancel a moment before deadline_at: %v %s", err, got.Status)
	}
}

// A submit whose idempotency key was taken but whose record was never
// written (its creator crashed between the two writes) creates the record
// under the key's id, once.
func TestIdempotencyKeyWithoutItsRecordIsRecovered(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	id := domain.NewRequestID()
	key := kvstate.IdempotencyKey("acme", f.agent.Principal, "k-1")
	if _, took, err := f.store.ClaimIdempotency(ctx, key, kvstate.Idempotency{RequestID: id, BodyDigest: "sha256:body", CreatedAt: f.clock.Now()}, time.Hour); err != nil || !took {
		t.Fatalf("claim: %v %v", took, err)
	}
	in := approvals.SubmitInput{Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`)}
	rec, created, err := f.svc.Submit(ctx, f.agent, in, "k-1", "sha256:body")
	if err != nil || rec.ID != id || created {
		t.Fatalf("submit with the orphaned key: %v id %s (want %s) created %v", err, rec.ID, id, created)
	}
	if got, err := f.store.GetRequest(ctx, "acme", id); err != nil || got.Status != domain.StatusPending {
		t.Errorf("the recovered record: %v %s", err, got.Status)
	}
	again, _, err := f.svc.Submit(ctx, f.agent, in, "k-1", "sha256:body")
	if err != nil || again.ID != id || again.Revision != 0 {
		t.Errorf("a repeat: %v id %s rev %d", err, again.ID, again.Revision)
	}
}

// A terminal record is removed request_retention after it ended, and not
// a moment before; a pending one, or one changed since, never.
func TestRemoveRequestAfterRetention(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zero := uint64(0)
	rec := f.submit(t, "1h")
	pending := f.submit(t, "1h")
	done, err := f.svc.Answer(ctx, f.person, rec.ID, approvals.AnswerInput{Expected: &zero, Decision: approvals.DecisionDeny})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Set(done.Decision.DecidedAt.Add(24*time.Hour - time.Second))
	for _, r := range []kvstate.Record{done, pending} {
		if err := f.svc.RemoveRequest(ctx, "acme", r.ID, r.KVRevision); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.GetRequest(ctx, "acme", r.ID); err != nil {
			t.Errorf("%s removed before its retention: %v", r.Status, err)
		}
	}
	f.clock.Set(done.Decision.DecidedAt.Add(24 * time.Hour))
	if err := f.svc.RemoveRequest(ctx, "acme", done.ID, done.KVRevision-1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.GetRequest(ctx, "acme", done.ID); err != nil {
		t.Errorf("removed at a revision it no longer has: %v", err)
	}
	if err := f.svc.RemoveRequest(ctx, "acme", pending.ID, pending.KVRevision); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.GetRequest(ctx, "acme", pending.ID); err != nil {
		t.Errorf("a pending request was removed: %v", err)
	}
	if err := f.svc.RemoveRequest(ctx, "acme", done.ID, done.KVRevision); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.GetRequest(ctx, "acme", done.ID); !errors.Is(err, kvstate.ErrNotFound) {
		t.Errorf("after its retention: %v, want ErrNotFound", err)
	}
}

// A revoked grant is removed only once request_retention has passed since
// its revocation, only at the revision it was read at, and a grant in
// force never.
func TestRemoveGrantAfterRetention(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	zero := uint64(0)
	grantFor := func(tool string) domain.Grant {
		t.Helper()
		rec, _, err := f.svc.Submit(ctx, f.agent, approvals.SubmitInput{Tool: tool, Arguments: json.RawMessage(`{}`)}, "", "")
		if err != nil || rec.Status != domain.StatusPending {
			t.Fatalf("submit: %v %s", err, rec.Status)
		}
		if _, err := f.svc.Answer(ctx, f.person, rec.ID, approvals.AnswerInput{Expected: &zero,
			Decision: approvals.DecisionAllow, Scope: domain.ScopeLifetime}); err != nil {
			t.Fatal(err)
		}
		gs, _ := f.svc.ListGrants(ctx, f.person, approvals.GrantFilter{Revoked: true, Limit: 500})
		for _, g := range gs {
			if g.RequestID == rec.ID {
				return g
			}
		}
		t.Fatalf("no grant for %s", rec.ID)
		return domain.Grant{}
	}
	kept, g := grantFor("build"), grantFor("deploy")
	if _, err := f.svc.RevokeGrant(ctx, f.person, g.ID); err != nil {
		t.Fatal(err)
	}
	rev := func(id domain.GrantID) uint64 {
		_, r, err := f.store.GetGrant(ctx, "acme", id)
		if err != nil {
			t.Fatalf("grant %s: %v", id, err)
		}
		return r
	}
	f.clock.Advance(24*time.Hour - time.Second)
	if err := f.svc.RemoveGrant(ctx, "acme", g.ID, rev(g.ID)); err != nil {
		t.Fatal(err)
	}
	rev(g.ID) // still there a second before it is due
	f.clock.Advance(time.Hour)
	if err := f.svc.RemoveGrant(ctx, "acme", g.ID, rev(g.ID)-1); err != nil {
		t.Fatal(err)
	}
	rev(g.ID) // not at a revision it was not read at
	if err := f.svc.RemoveGrant(ctx, "acme", kept.ID, rev(kept.ID)); err != nil {
		t.Fatal(err)
	}
	rev(kept.ID) // a grant in force stays
	if err := f.svc.RemoveGrant(ctx, "acme", g.ID, rev(g.ID)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.store.GetGrant(ctx, "acme", g.ID); !errors.Is(err, kvstate.ErrNotFound) {
		t.Fatalf("after its retention: %v, want ErrNotFound", err)
	}
}

// New refuses a config it cannot run with (ErrConfig), and a registry
// that already holds its metrics, instead of running unmeasured.
func TestNewValidates(t *testing.T) {
	store, views, _ := testutil.NewState(t, "tenants: [{id: acme}]\n")
	full := approvals.Config{Store: store, Views: views, Checker: newChecker(views), Registry: prometheus.NewRegistry()}
	for name, drop := range map[string]func(*approvals.Config){
		"store":   func(c *approvals.Config) { c.Store = nil },
		"views":   func(c *approvals.Config) { c.Views = nil },
		"checker": func(c *approvals.Config) { c.Checker = nil },
	} {
		cfg := full
		drop(&cfg)
		if _, err := approvals.New(cfg); !errors.Is(err, approvals.ErrConfig) {
			t.Errorf("New without the %s: %v, want ErrConfig", name, err)
		}
	}
	if _, err := approvals.New(full); err != nil {
		t.Fatalf("New(a whole config) = %v", err)
	}
	if _, err := approvals.New(full); err == nil {
		t.Error("New registered its metrics twice in one registry without an error")
	}
}

// newChecker is the check order over views, without a judge or rules.
func newChecker(views deciders.State) *deciders.Checker {
	c, err := deciders.NewChecker(deciders.CheckerConfig{Views: views})
	if err != nil {
		panic(err) // only a nil views is refused
	}
	return c
}
