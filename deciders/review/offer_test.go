package review_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/deciders/review"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// connect opens a connection to the server's NATS as countersign's own
// user (every permission), closed with the server.
func connect(t *testing.T, srv *servertest.Server) *nats.Conn {
	t.Helper()
	js, err := srv.App.Broker.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	return js.Conn()
}

// connectAs connects to the embedded server's client port as an agent's
// runtime does: with the agent's token and its inbox prefix, and only the
// permissions that token gets.
func connectAs(t *testing.T, srv *servertest.Server, token string, agent domain.AgentID) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(srv.App.Broker.ClientURL(), nats.Token(token),
		nats.CustomInboxPrefix(events.InboxPrefix("demo", domain.Ref{Kind: domain.KindAgent, ID: string(agent)})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// offers records the offers on one subject, taking them (empty reply) when
// take says so.
type offers struct {
	mu   sync.Mutex
	msgs []*nats.Msg
	take func(n int) bool // n: 1 for the first offer received
}

func listen(t *testing.T, nc *nats.Conn, subject string, take func(n int) bool) *offers {
	t.Helper()
	o := &offers{take: take}
	var seen atomic.Int64
	sub, err := nc.QueueSubscribe(subject, events.ReviewQueue, func(m *nats.Msg) {
		// A taken offer is answered before it is counted: a test that
		// sees it counted and moves the clock on finds the take sent.
		if o.take(int(seen.Add(1))) {
			_ = m.Respond(nil)
			_ = nc.Flush()
		}
		o.mu.Lock()
		o.msgs = append(o.msgs, m)
		o.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return o
}

func (o *offers) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.msgs)
}

func (o *offers) get(i int) *nats.Msg {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.msgs[i]
}

func always(int) bool { return true }
func never(int) bool  { return false }

func submit(t *testing.T, api servertest.API, token string, i int) domain.Request {
	t.Helper()
	code, data := api.Do(http.MethodPost, "/v1/requests", token, map[string]any{"tool": "issue_refund",
		"arguments": map[string]any{"payment_id": i, "amount": 4900}, "timeout": "1h", "reason": "Duplicate charge."})
	var r domain.Request
	if err := json.Unmarshal(data, &r); code != http.StatusCreated || err != nil {
		t.Fatalf("submit: %d %s", code, data)
	}
	return r
}

// The offer for agt_main of agt_programmer's request: a core NATS request
// on countersign.demo.review.agt_main, a binary-mode CloudEvent of type
// dev.countersign.review.requested about the request, whose data is the
// bundle: the record and agt_main's id, role, memory and the brief it gave
// agt_programmer — and nothing else.
func TestOfferIsACloudEventWithTheBundle(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	nc := connect(t, srv)
	got := listen(t, nc, "countersign.demo.review.*", always)
	r := submit(t, srv.API(t), servertest.TokenProgrammer, 1)
	testutil.Eventually(t, 10*time.Second, func() bool { return got.count() > 0 }, "an offer arrives")
	m := got.get(0)
	if m.Subject != "countersign.demo.review.agt_main" || m.Reply == "" {
		t.Fatalf("offer on %q reply %q; want a request on countersign.demo.review.agt_main", m.Subject, m.Reply)
	}
	h := m.Header
	want := map[string]string{"ce-specversion": "1.0", "ce-type": "dev.countersign.review.requested", "ce-subject": string(r.ID),
		"ce-source": "/countersign/demo", "ce-tenant": "demo", "ce-revision": "0", "ce-datacontenttype": "application/json"}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, h.Get(k), v)
		}
	}
	if id := h.Get("ce-id"); len(id) < 5 || id[:4] != "evt_" {
		t.Errorf("ce-id = %q, want evt_<ULID>", id)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(m.Data, &raw); err != nil || len(raw) != 2 || raw["request"] == nil || len(raw["decider"]) != 4 {
		t.Fatalf("bundle = %s (%v); want exactly request and decider{id, role, memory, brief}", m.Data, err)
	}
	b, err := review.Decode(m)
	if err != nil {
		t.Fatal(err)
	}
	wantDecider := domain.ReviewDecider{ID: "agt_main", Role: "Coordinates the support team.", Brief: "Fix the failing refund job."}
	if b.Decider != wantDecider || b.Request.ID != r.ID || b.Request.Revision != 0 || b.Request.CallDigest != r.CallDigest {
		t.Fatalf("bundle = %+v, want decider %+v and the request %s at revision 0", b, wantDecider, r.ID)
	}
}

// Two runtimes of one agent in the queue group: each offer reaches one of
// them, once (both take every offer).
func TestOffersReachOneRuntimeOfTheGroup(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	a, b := listen(t, connect(t, srv), "countersign.demo.review.agt_programmer", always),
		listen(t, connect(t, srv), "countersign.demo.review.agt_programmer", always)
	api := srv.API(t)
	const n = 20
	for i := range n {
		submit(t, api, servertest.TokenSub, i)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return a.count()+b.count() >= n }, "every offer reaches a runtime")
	time.Sleep(200 * time.Millisecond)
	var ids []string
	for _, o := range []*offers{a, b} {
		for i := range o.count() {
			ids = append(ids, o.get(i).Header.Get("ce-subject"))
		}
	}
	sort.Strings(ids)
	if len(ids) != n {
		t.Fatalf("%d offers for %d requests (a %d, b %d), want one each", len(ids), n, a.count(), b.count())
	}
	for i := 1; i < n; i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("request %s offered twice", ids[i])
		}
	}
}

// An offer nobody takes is offered again (once its 5 s take wait has
// passed, same event). Once the request moves on the offers to the old
// decider stop: r1 goes up and the next decider's subject gets its own
// offer (SPEC §3: escalation emits on the next decider's subject); r2 is
// cancelled (no new work message: the request mirror alone stops its
// offers). The server's clock is stepped: nothing here waits for a
// backoff.
func TestReofferUntilTheApproverChanges(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(time.Now())
	srv := servertest.Start(t, servertest.WithClock(clock))
	nc := connect(t, srv)
	prog := listen(t, nc, "countersign.demo.review.agt_programmer", never)
	mainOffers := listen(t, nc, "countersign.demo.review.agt_main", always)
	api := srv.API(t)
	r1, r2 := submit(t, api, servertest.TokenSub, 1), submit(t, api, servertest.TokenSub, 2)
	testutil.Eventually(t, 10*time.Second, func() bool { return prog.count() >= 2 }, "both reviews are offered")
	if n := prog.count(); n != 2 {
		t.Fatalf("%d offers before the take wait passed, want 2", n)
	}
	clock.Advance(5 * time.Second) // the take wait, and the first retry delay with it
	testutil.Eventually(t, 10*time.Second, func() bool { return prog.count() >= 4 }, "the untaken offers are offered again")
	seen := map[string][]string{}
	for i := range 4 {
		m := prog.get(i)
		seen[m.Header.Get("ce-subject")] = append(seen[m.Header.Get("ce-subject")], m.Header.Get("ce-id"))
	}
	for _, id := range []domain.RequestID{r1.ID, r2.ID} {
		if ids := seen[string(id)]; len(ids) != 2 || ids[0] != ids[1] {
			t.Fatalf("offers of %s: events %v; want the same event offered twice", id, ids)
		}
	}
	api.Answer(servertest.TokenProgrammer, r1.ID, "abstain", "Not mine to say.")
	if code, data := api.Do(http.MethodPost, "/v1/requests/"+string(r2.ID)+"/cancel", servertest.TokenSub, map[string]any{}); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, data)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return mainOffers.count() > 0 }, "agt_main gets the escalated offer")
	m := mainOffers.get(0)
	if m.Subject != "countersign.demo.review.agt_main" || m.Header.Get("ce-subject") != string(r1.ID) || m.Header.Get("ce-revision") != "1" {
		t.Fatalf("escalated offer on %s about %s at revision %s", m.Subject, m.Header.Get("ce-subject"), m.Header.Get("ce-revision"))
	}
	// The take reaches the offering loop a moment after the runtime sent
	// it; moving the clock on first would pass the take wait before it.
	time.Sleep(200 * time.Millisecond)
	before := prog.count()
	clock.Advance(16 * time.Second)    // past the next offer the old decider would have had (10 s backoff)
	time.Sleep(300 * time.Millisecond) // an absence check: an offer that came would have arrived
	if after := prog.count(); after != before {
		t.Fatalf("agt_programmer got %d more offers after the requests moved on", after-before)
	}
	if mainOffers.count() != 1 {
		t.Fatalf("agt_main got %d offers of a taken review, want 1", mainOffers.count())
	}
}

// Offers live in a process, yet survive its restart: a review nobody took
// before the restart is offered again after it (its work message comes
// back at start, re-derived from the pending record by the outbox).
func TestOffersResumeAfterARestart(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	r := submit(t, srv.API(t), servertest.TokenSub, 1)
	srv.Restart(t)
	got := listen(t, connect(t, srv), "countersign.demo.review.agt_programmer", always)
	testutil.Eventually(t, 20*time.Second, func() bool { return got.count() > 0 }, "the review is offered after the restart")
	if id := got.get(0).Header.Get("ce-subject"); id != string(r.ID) {
		t.Fatalf("offer about %s, want %s", id, r.ID)
	}
}
