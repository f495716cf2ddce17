package app_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	natsjs "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/outbox"
	"github.com/nats-io/nats.go"
)

// People's workers on the bus (SPEC §9): a person's token subscribes to
// countersign.<tenant>.people.<person> and hears review.requested and
// review.withdrawn; it answers with api.answer.

const peopleTenants = `tenants:
  - id: acme
    members: [{id: u-1, policy: {allow: ["*"]}}, {id: u-2, policy: {allow: ["*"]}}]
    groups: [{id: release, members: [u-1, u-2]}]
    approval_policies: [{id: deploys, match: ["tools.call:deploy"], approvers: {group: release}, approve: 2}]
    agents: [{id: agt_a, member: u-1}]
    tokens: [{token: acme-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]},
             {token: acme-person2, principal: "person:u-2", scopes: [approvals:read, approvals:write]},
             {token: acme-a, principal: "agent:agt_a", scopes: [requests:write]},
             {token: acme-ops, principal: "service:ops", scopes: [approvals:read]},
             {token: acme-audit, principal: "service:audit", scopes: [events:read]}]
  - id: globex
    members: [{id: u-1, policy: {allow: ["*"]}}]
    agents: [{id: agt_a, member: u-1}]
    tokens: [{token: globex-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]},
             {token: globex-ops, principal: "service:ops", scopes: [approvals:read]}]
`

var personU2 = domain.Ref{Kind: domain.KindPerson, ID: "u-2"}

// peopleMsg is one message of a people subject, read through the
// CloudEvents SDK's NATS binding in binary mode.
type peopleMsg struct {
	typ, subject string
	data         map[string]any
}

func nextPeople(t *testing.T, sub *nats.Subscription) peopleMsg {
	t.Helper()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no message on %s: %v", sub.Subject, err)
	}
	return nextPeopleOf(t, m)
}

func nextPeopleOf(t *testing.T, m *nats.Msg) peopleMsg {
	t.Helper()
	bm := natsjs.NewMessage(m)
	if bm.ReadEncoding() != binding.EncodingBinary {
		t.Fatalf("%s: encoding %v, want binary mode", m.Subject, bm.ReadEncoding())
	}
	e, err := binding.ToEvent(context.Background(), bm)
	if err != nil {
		t.Fatalf("%s: %v", m.Subject, err)
	}
	pm := peopleMsg{typ: e.Type(), subject: e.Subject()}
	if e.Source() != events.Source(acme) || e.Extensions()["tenant"] != string(acme) {
		t.Errorf("%s: source %s, extensions %v", m.Subject, e.Source(), e.Extensions())
	}
	if err := json.Unmarshal(e.Data(), &pm.data); err != nil {
		t.Fatalf("%s: data %s: %v", m.Subject, e.Data(), err)
	}
	return pm
}

// busCall sends op on c with token and returns the status and body.
func busCall(t *testing.T, c *busClient, op, token string, body any) (string, map[string]any) {
	t.Helper()
	m := nats.NewMsg(events.APISubject(acme, op))
	m.Header.Set("Authorization", "Bearer "+token)
	m.Data, _ = json.Marshal(body)
	resp, err := c.nc.RequestMsg(m, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	var out map[string]any
	_ = json.Unmarshal(resp.Data, &out)
	status := resp.Header.Get("Status")
	if status == "" {
		status = resp.Header.Get("Nats-Service-Error-Code")
	}
	return status, out
}

// subscribePeople subscribes c to person's subject and makes sure the
// server has the subscription before anything is sent.
func subscribePeople(t *testing.T, c *busClient, tenant domain.TenantID, person string) *nats.Subscription {
	t.Helper()
	sub, err := c.nc.SubscribeSync(events.PeopleSubject(tenant, domain.MemberID(person)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub
}

// The issue's "A person's bus worker receives and answers a request using
// NATS only": an agent submits over the bus, the person's worker hears
// review.requested with the person's bundle, answers with api.answer as
// that person, and hears review.withdrawn with the request's new status.
func TestPersonWorkerReceivesAndAnswersOnTheBus(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(peopleTenants))
	person := mustDial(t, srv, "acme-person", acme, personU1)
	sub := subscribePeople(t, person, acme, "u-1")
	ops := mustDial(t, srv, "acme-ops", acme, opsNoRead)
	gateway := subscribePeople(t, ops, acme, "u-1") // a service acting for people hears it too
	agent := mustDial(t, srv, "acme-a", acme, agentA)

	status, rec := busCall(t, agent, "submit", "acme-a", refund(1))
	if status != "201" || rec["status"] != "pending" {
		t.Fatalf("submit: %s %v", status, rec)
	}
	id := rec["id"].(string)
	got := nextPeople(t, sub)
	if got.typ != events.TypeReviewRequested || got.subject != id {
		t.Fatalf("first message %s %s, want review.requested of %s", got.typ, got.subject, id)
	}
	decider, _ := got.data["decider"].(map[string]any)
	if len(decider) != 2 || decider["id"] != "u-1" || decider["kind"] != "person" {
		t.Errorf("decider %v, want {id: u-1, kind: person}", got.data["decider"])
	}
	req, _ := got.data["request"].(map[string]any)
	if req["id"] != id || req["status"] != "pending" || len(got.data) != 2 {
		t.Fatalf("bundle %v", got.data)
	}
	if g := nextPeople(t, gateway); g.typ != events.TypeReviewRequested || g.subject != id {
		t.Errorf("gateway heard %s %s", g.typ, g.subject)
	}

	status, answered := busCall(t, person, "answer", "acme-person",
		map[string]any{"id": id, "expected": req["revision"], "decision": "allow"})
	if status != "200" || answered["status"] != "approved" {
		t.Fatalf("answer as the person on the bus: %s %v", status, answered)
	}
	by := answered["decision"].(map[string]any)["by"].(map[string]any)
	if by["kind"] != "person" || by["id"] != "u-1" {
		t.Errorf("decided by %v", by)
	}
	got = nextPeople(t, sub)
	if got.typ != events.TypeReviewWithdrawn || got.subject != id ||
		got.data["request_id"] != id || got.data["status"] != "approved" || len(got.data) != 2 {
		t.Fatalf("after the answer: %s %s %v, want review.withdrawn {request_id, status: approved}", got.typ, got.subject, got.data)
	}
	person.clean(t)
}

// A request that stops waiting on a person because it was cancelled or
// expired is withdrawn from them, with that status.
func TestPersonWorkerWithdrawnOnCancelAndExpiry(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	srv := servertest.Start(t, servertest.WithConfig(peopleTenants), servertest.WithClock(clock))
	person := mustDial(t, srv, "acme-person", acme, personU1)
	sub := subscribePeople(t, person, acme, "u-1")
	agent := mustDial(t, srv, "acme-a", acme, agentA)

	expect := func(typ, id, status string) {
		t.Helper()
		got := nextPeople(t, sub)
		if got.typ != typ || got.subject != id || (status != "" && got.data["status"] != status) {
			t.Fatalf("got %s %s %v, want %s of %s (status %q)", got.typ, got.subject, got.data, typ, id, status)
		}
	}
	_, rec := busCall(t, agent, "submit", "acme-a", refund(1))
	cancelled := rec["id"].(string)
	expect(events.TypeReviewRequested, cancelled, "")
	if status, _ := busCall(t, agent, "cancel", "acme-a", map[string]any{"id": cancelled}); status != "200" {
		t.Fatalf("cancel: %s", status)
	}
	expect(events.TypeReviewWithdrawn, cancelled, "cancelled")

	body := refund(2)
	body["timeout"] = "1m"
	_, rec = busCall(t, agent, "submit", "acme-a", body)
	expired := rec["id"].(string)
	expect(events.TypeReviewRequested, expired, "")
	testutil.Eventually(t, 10*time.Second, func() bool { return clock.Waiting() > 0 }, "the deadline armed")
	clock.Advance(2 * time.Minute)
	expect(events.TypeReviewWithdrawn, expired, "expired")
}

// Each principal subscribes to its own people subject(s) only: a person
// their own, a service with approvals:read its tenant's; never another
// person's, never another tenant's, and nothing for other tokens.
func TestPeopleSubjectsOnlyYourOwn(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(peopleTenants))
	p := mustDial(t, srv, "acme-person", acme, personU1)
	subscribePeople(t, p, acme, "u-1")
	p.clean(t)
	p.refusedSub(t, events.PeopleSubject(acme, "u-2"))
	p.refusedSub(t, events.TenantPeopleFilter(acme))
	p.refusedSub(t, events.PeopleSubject(globex, "u-1"))
	mustDial(t, srv, "acme-person2", acme, personU2).refusedSub(t, events.PeopleSubject(acme, "u-1"))
	mustDial(t, srv, "globex-person", globex, personU1).refusedSub(t, events.PeopleSubject(acme, "u-1"))

	ops := mustDial(t, srv, "acme-ops", acme, opsNoRead)
	if _, err := ops.nc.SubscribeSync(events.TenantPeopleFilter(acme)); err != nil {
		t.Fatal(err)
	}
	ops.clean(t)
	ops.refusedSub(t, events.PeopleSubject(globex, "u-1"))
	mustDial(t, srv, "acme-audit", acme, audit).refusedSub(t, events.PeopleSubject(acme, "u-1"))
	mustDial(t, srv, "acme-a", acme, agentA).refusedSub(t, events.PeopleSubject(acme, "u-1"))
}

// Delivery to people is at most once: a change delivered to the outbox
// again after its event was already republished (its first process died
// before acking) tells nobody again. The first request's event is stored
// as that process would have; the outbox then tells only the second
// request's person (it handles the changes in stream order, so the first
// message it sends decides).
func TestPeopleToldAtMostOnceWhenAChangeComesAgain(t *testing.T) {
	url := startExternalNATS(t)
	first := startRole(t, url, "deciders")
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, err := first.Broker.JS.Consumer(context.Background(), requestsStream, outbox.Consumer)
		return err == nil
	}, "the outbox consumer exists")
	stopApp(t, first)

	api := startRole(t, url, "api") // no outbox runs
	ids := submitN(t, api, 1, 2)
	js := api.Broker.JS
	last, err := js.Conn().JetStream()
	if err != nil {
		t.Fatal(err)
	}
	stored, err := last.GetLastMsg(requestsStream, "$KV."+kvstate.BucketRequests+"."+kvstate.RequestKey("demo", domain.RequestID(ids[0])))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := events.PeekChange(stored.Header)
	if !ok {
		t.Fatal("stored write without its event")
	}
	again := nats.NewMsg(events.EventSubject("demo", c.Type))
	events.CopyEventHeaders(again.Header, stored.Header)
	again.Header.Set(nats.MsgIdHdr, c.MsgID())
	again.Data = stored.Data
	if _, err := js.PublishMsg(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	sub, err := js.Conn().SubscribeSync(events.PeopleSubject("demo", "u-1"))
	if err != nil {
		t.Fatal(err)
	}
	_ = js.Conn().Flush()

	startRole(t, url, "deciders")
	m, err := sub.NextMsg(20 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header.Get("ce-subject"); got != ids[1] {
		t.Fatalf("the person heard first of %s, want %s (%s was told already)", got, ids[1], ids[0])
	}
}

// A request waiting on a group is requested of each member; a member whose
// allow is counted hears it withdrawn (still pending), the others when the
// quorum ends it. The gateway (a service with approvals:read) hears every
// message in the order the one outbox sent them.
func TestPeopleOfAGroupOnTheBus(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(peopleTenants))
	ops := mustDial(t, srv, "acme-ops", acme, opsNoRead)
	all, err := ops.nc.SubscribeSync(events.TenantPeopleFilter(acme))
	if err != nil {
		t.Fatal(err)
	}
	_ = ops.nc.Flush()
	agent := mustDial(t, srv, "acme-a", acme, agentA)
	status, rec := busCall(t, agent, "submit", "acme-a", map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}})
	if status != "201" || rec["status"] != "pending" {
		t.Fatalf("submit: %s %v", status, rec)
	}
	id := rec["id"].(string)
	expect := func(person, typ, status string) map[string]any {
		t.Helper()
		m, err := all.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("want %s for %s: %v", typ, person, err)
		}
		got := nextPeopleOf(t, m)
		if m.Subject != events.PeopleSubject(acme, domain.MemberID(person)) || got.typ != typ || got.subject != id ||
			(status != "" && got.data["status"] != status) {
			t.Fatalf("got %s %s %v, want %s for %s (status %q)", m.Subject, got.typ, got.data, typ, person, status)
		}
		return got.data
	}
	b := expect("u-1", events.TypeReviewRequested, "")
	expect("u-2", events.TypeReviewRequested, "")
	rev := b["request"].(map[string]any)["revision"]
	for _, p := range []struct{ token, person, status string }{{"acme-person", "u-1", "pending"}, {"acme-person2", "u-2", "approved"}} {
		c := mustDial(t, srv, p.token, acme, domain.Ref{Kind: domain.KindPerson, ID: p.person})
		if status, out := busCall(t, c, "answer", p.token, map[string]any{"id": id, "expected": rev, "decision": "allow"}); status != "200" {
			t.Fatalf("%s allows: %s %v", p.person, status, out)
		}
		expect(p.person, events.TypeReviewWithdrawn, p.status)
	}
}
