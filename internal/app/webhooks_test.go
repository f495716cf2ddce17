package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

func startHooks(t *testing.T, rc *receiver, yaml string) *servertest.Server {
	t.Setenv("CS_TEST_HOOK_SECRET", hookSecret)
	t.Setenv("CS_TEST_LINK_SECRET", "the decision links' test key")
	return servertest.Start(t, servertest.WithConfig(yaml), servertest.WithNotify(testTuning(t, rc)))
}

const linksTop = "public_url: https://approvals.example.com\nlink_secret_env: CS_TEST_LINK_SECRET\n"

// A subscribed event arrives as a structured-mode CloudEvent, signed the
// Standard Webhooks way (checked by the receiver's own verifier), with
// the decision links of a request that waits on a person in its data.
func TestWebhookSignedCloudEvent(t *testing.T) {
	rc := newReceiver(t, nil)
	srv := startHooks(t, rc, hookTenant(linksTop, "", hookLine(rc.srv.URL, "cloudevents", "request.created, request.decided")))
	var r record
	if code := newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", refund(1), nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.of(r.ID)) == 1 }, "request.created delivered")
	d := rc.of(r.ID)[0]
	if d.Type != "dev.countersign.request.created" || d.ContentType != "application/cloudevents+json" || d.Revision != "0" {
		t.Fatalf("delivery = %+v", d)
	}
	var data struct {
		ID, Status string
		Links      struct {
			ApproveURL string `json:"approve_url"`
			DenyURL    string `json:"deny_url"`
		} `json:"links"`
		Arguments map[string]any
	}
	if err := json.Unmarshal(d.Data, &data); err != nil || data.ID != r.ID || data.Status != "pending" || data.Arguments["amount"] != 4900.0 {
		t.Fatalf("data = %s (%v)", d.Data, err)
	}
	if !strings.HasPrefix(data.Links.ApproveURL, "https://approvals.example.com/d/") || !strings.HasPrefix(data.Links.DenyURL, "https://approvals.example.com/d/") ||
		data.Links.ApproveURL == data.Links.DenyURL {
		t.Fatalf("links = %+v", data.Links)
	}
	answer(t, srv, "hook-person", r.ID, 0, "allow")
	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.of(r.ID)) == 2 }, "request.decided delivered")
	if got := rc.of(r.ID)[1]; got.Type != "dev.countersign.request.decided" || strings.Contains(string(got.Data), `"links"`) {
		t.Fatalf("second delivery = %s %s", got.Type, got.Data)
	}
	if len(rc.bad) != 0 {
		t.Fatalf("signatures that did not verify: %v", rc.bad)
	}
}

func answer(t *testing.T, srv *servertest.Server, token, id string, rev uint64, decision string) record {
	t.Helper()
	var out record
	if code := newClient(srv.URL, token).do(t, "POST", "/v1/requests/"+id, map[string]any{"expected": rev, "decision": decision}, nil, &out); code != 200 {
		t.Fatalf("answer %s: %d", id, code)
	}
	return out
}

// A receiver that fails five times (and until released) gets each event
// once, in order, and the decision is taken while its deliveries fail.
func TestWebhookRetriesInOrderOffTheDecisionPath(t *testing.T) {
	var released atomic.Bool
	rc := newReceiver(t, func(n int) bool { return n < 5 || !released.Load() })
	srv := startHooks(t, rc, hookTenant("", "", hookLine(rc.srv.URL, "cloudevents", "")))
	var r record
	newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", refund(1), nil, &r)
	testutil.Eventually(t, 10*time.Second, func() bool { return rc.failed() >= 1 }, "a first failed delivery")
	decided := answer(t, srv, "hook-person", r.ID, 0, "allow")
	if decided.Status != "approved" || len(rc.events()) != 0 {
		t.Fatalf("answer while deliveries fail: status %s, delivered %d", decided.Status, len(rc.events()))
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return rc.failed() >= 5 }, "five failed deliveries")
	released.Store(true)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.of(r.ID)) >= 2 }, "both events delivered")
	got := rc.of(r.ID)
	if len(got) != 2 || got[0].Type != "dev.countersign.request.created" || got[1].Type != "dev.countersign.request.decided" || got[0].ID == got[1].ID {
		t.Fatalf("deliveries = %v", types(got))
	}
	if v := metric(t, srv.URL, `countersign_webhook_deliveries_total{outcome="failed"}`); v < 5 {
		t.Errorf("failed deliveries counted: %v", v)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		return metric(t, srv.URL, "countersign_webhook_retry_backlog") == 0 && metric(t, srv.URL, "countersign_webhook_oldest_undelivered_seconds") == 0
	}, "the backlog empties")
}

// A restart in the middle of the retries resumes them from the stored
// progress.
func TestWebhookRetriesResumeAfterRestart(t *testing.T) {
	var released atomic.Bool
	rc := newReceiver(t, func(int) bool { return !released.Load() })
	srv := startHooks(t, rc, hookTenant("", "", hookLine(rc.srv.URL, "cloudevents", "request.created")))
	var r record
	newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", refund(1), nil, &r)
	testutil.Eventually(t, 10*time.Second, func() bool { return rc.failed() >= 2 }, "failing deliveries")
	if v := metric(t, srv.URL, "countersign_webhook_retry_backlog"); v != 1 {
		t.Errorf("retry backlog = %v, want 1", v)
	}
	if v := metric(t, srv.URL, "countersign_webhook_oldest_undelivered_seconds"); v <= 0 {
		t.Errorf("oldest undelivered age = %v, want > 0", v)
	}
	srv.Restart(t)
	before := rc.failed()
	testutil.Eventually(t, 10*time.Second, func() bool { return rc.failed() > before }, "the restarted server retries")
	released.Store(true)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.of(r.ID)) == 1 }, "the event delivered after the restart")
	if got := rc.of(r.ID); got[0].Type != "dev.countersign.request.created" {
		t.Fatalf("delivery = %+v", got[0])
	}
}

// A hanging endpoint, a redirect loop and a 10 MB answer are each bounded
// and do not hold up another endpoint.
func TestWebhookBadEndpointsAreBounded(t *testing.T) {
	rc := newReceiver(t, nil)
	var loopHits, followed atomic.Int64
	stop := make(chan struct{})
	var hangRetried atomic.Bool // one event tried twice: the first attempt timed out
	var hangMu sync.Mutex
	hangHits := map[string]int{}
	hang := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hangMu.Lock()
		hangHits[r.Header.Get("webhook-id")]++
		hangRetried.Store(hangRetried.Load() || hangHits[r.Header.Get("webhook-id")] > 1)
		hangMu.Unlock()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	loop := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			followed.Add(1)
		}
		loopHits.Add(1)
		http.Redirect(w, r, "/next", http.StatusTemporaryRedirect)
	}))
	var hugeServed, hugeWhole atomic.Int64
	huge := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hugeServed.Add(1)
		chunk := []byte(strings.Repeat("x", 1<<20))
		for i := 0; i < 10; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
		}
		hugeWhole.Add(1)
	}))
	for _, s := range []*httptest.Server{hang, loop, huge} {
		t.Cleanup(s.Close)
	}
	t.Cleanup(func() { close(stop) })
	hooks := hookLine(hang.URL, "cloudevents", "") + hookLine(loop.URL, "cloudevents", "") + hookLine(huge.URL, "cloudevents", "") +
		hookLine(rc.srv.URL, "cloudevents", "request.created")
	tune := testTuning(t, rc)
	tune.Timeout = 500 * time.Millisecond
	t.Setenv("CS_TEST_HOOK_SECRET", hookSecret)
	srv := servertest.Start(t, servertest.WithConfig(hookTenant("", "", hooks)), servertest.WithNotify(tune))
	var ids []string
	for i := 0; i < 3; i++ {
		var r record
		newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", refund(i), nil, &r)
		ids = append(ids, r.ID)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(rc.events()) == 3 }, "the good endpoint gets every event")
	for _, id := range ids { // requests do not wait for each other: any order
		if got := len(rc.of(id)); got != 1 {
			t.Errorf("request %s delivered %d times", id, got)
		}
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return loopHits.Load() >= 2 && hugeServed.Load() >= 3 && hangRetried.Load() },
		"the hanging endpoint tried again after a timeout, the loop and the huge answer tried")
	if followed.Load() != 0 {
		t.Errorf("a redirect was followed %d times", followed.Load())
	}
	if n := hugeWhole.Load(); n != 0 {
		t.Errorf("the 10 MB answer was read whole %d times", n)
	}
	if v := metric(t, srv.URL, `countersign_webhook_deliveries_total{outcome="failed"}`); v < 2 {
		t.Errorf("failed attempts (hang, loop) = %v", v)
	}
}

func types(ds []delivered) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Type+"@"+d.Revision)
	}
	return out
}
