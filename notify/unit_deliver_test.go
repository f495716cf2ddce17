package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// backoff's edges: a first failure waits about the base; a base above the
// cap waits the cap; a thousandth failure neither overflows nor passes the
// cap; every wait is between half and all of its step.
func TestBackoffEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		tu   Tuning
		n    int
		step time.Duration
	}{
		{"first failure", Tuning{BackoffBase: 5 * time.Second, BackoffMax: time.Hour}, 1, 5 * time.Second},
		{"n below 1 is the first", Tuning{BackoffBase: 5 * time.Second, BackoffMax: time.Hour}, 0, 5 * time.Second},
		{"base above the cap", Tuning{BackoffBase: 2 * time.Hour, BackoffMax: time.Hour}, 1, time.Hour},
		{"many failures", Tuning{BackoffBase: 5 * time.Second, BackoffMax: time.Hour}, 1000, time.Hour},
		{"the step that reaches the cap", Tuning{BackoffBase: 3 * time.Second, BackoffMax: 10 * time.Second}, 3, 10 * time.Second},
	} {
		for range 100 {
			if d := backoff(tc.tu, tc.n); d < tc.step/2 || d > tc.step {
				t.Fatalf("%s: backoff = %v, want in [%v, %v]", tc.name, d, tc.step/2, tc.step)
			}
		}
	}
}

// post: a 2xx is delivered; any other answer, a redirect too (never
// followed: the body is signed for the configured URL), is a failed
// attempt; a signed endpoint's attempt carries the Standard Webhooks
// headers and an unsigned one none; an answer is read only up to max.
func TestPost(t *testing.T) {
	var redirected atomic.Int32
	var last atomic.Value // http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		last.Store(r.Header.Clone())
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusNoContent)
		case "/accepted":
			w.WriteHeader(http.StatusAccepted)
		case "/redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		case "/elsewhere":
			redirected.Add(1)
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
		default:
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	c := newClient(Tuning{Timeout: 10 * time.Second})
	ctx := context.Background()
	it := &item{id: "msg_1"}
	signed := func(path string) *Endpoint { return &Endpoint{URL: srv.URL + path, Key: []byte("k")} }

	for path, ok := range map[string]bool{"/ok": true, "/accepted": true, "/big": true, "/redirect": false, "/fail": false} {
		err := post(ctx, c, signed(path), it, "application/json", []byte(`{}`), 1024)
		if (err == nil) != ok {
			t.Errorf("post %s: %v, want delivered %v", path, err, ok)
		}
	}
	if redirected.Load() != 0 {
		t.Error("a redirect was followed")
	}

	if err := post(ctx, c, signed("/ok"), it, "application/cloudevents+json", []byte(`{}`), 1024); err != nil {
		t.Fatal(err)
	}
	h := last.Load().(http.Header)
	if h.Get(HeaderID) != "msg_1" || h.Get(HeaderTimestamp) == "" || !strings.HasPrefix(h.Get(HeaderSignature), "v1,") {
		t.Errorf("a signed attempt's headers: %v", h)
	}
	if h.Get("Content-Type") != "application/cloudevents+json" || h.Get("User-Agent") != "countersign-webhooks" {
		t.Errorf("content type %q, user agent %q", h.Get("Content-Type"), h.Get("User-Agent"))
	}
	if err := post(ctx, c, &Endpoint{URL: srv.URL + "/ok", Format: FormatSlack}, it, "application/json", []byte(`{}`), 1024); err != nil {
		t.Fatal(err)
	}
	if h := last.Load().(http.Header); h.Get(HeaderSignature) != "" || h.Get(HeaderID) != "" {
		t.Errorf("an unsigned endpoint's attempt was signed: %v", h)
	}
}

// A tracker's floor follows the oldest open write whatever order writes
// finish in; a write done before a restart and not read again yet stays
// in the progress saved.
func TestTrackerOutOfOrder(t *testing.T) {
	tr := newTracker(progress{})
	if string(tr.snapshot()) != `{"floor":0}` {
		t.Fatalf("a new tracker: %s", tr.snapshot())
	}
	for _, s := range []uint64{1, 2, 3, 4} {
		if !tr.read(s) {
			t.Fatalf("read %d was skipped", s)
		}
	}
	for _, tc := range []struct {
		done uint64
		want string
	}{
		{3, `{"floor":0,"done":[3]}`},
		{1, `{"floor":1,"done":[3]}`},
		{4, `{"floor":1,"done":[3,4]}`},
		{2, `{"floor":4}`},
	} {
		tr.markDone(tc.done)
		if got := string(tr.snapshot()); got != tc.want {
			t.Errorf("after %d done: %s, want %s", tc.done, got, tc.want)
		}
	}

	restarted := newTracker(progress{Floor: 4, Done: []uint64{7, 9}})
	restarted.read(5)
	if got, want := string(restarted.snapshot()), `{"floor":4,"done":[7,9]}`; got != want {
		t.Errorf("after a restart, before 7 and 9 are read again: %s, want %s", got, want)
	}
	restarted.markDone(5)
	if restarted.read(7) {
		t.Error("7, done before the restart, was read as new")
	}
	if got, want := string(restarted.snapshot()), `{"floor":7,"done":[9]}`; got != want {
		t.Errorf("after 7 is skipped: %s, want %s", got, want)
	}
}
