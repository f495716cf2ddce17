package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// TestAPITraceparent: a traceparent that is not a valid W3C trace context
// (version 00) is ignored, never a retryable 503 (SPEC §5); a valid one
// reaches the request's events.
func TestAPITraceparent(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	ch, _ := openEvents(t, url, tokPerson, "")
	const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tp := range []string{
		strings.Repeat("a", 8000),   // oversized
		strings.Repeat("0", 200000), // larger than a NATS message may carry
		"garbage",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", // uppercase
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", // zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // zero parent id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	} {
		r := main.do("POST", "/v1/requests", `{"tool":"deploy","arguments":{}}`, "traceparent", tp)
		r.want(t, "submit with traceparent "+tp[:min(len(tp), 40)], http.StatusCreated)
		if ev := nextAbout(t, ch, str(r.body["id"])); strings.Contains(ev.data, "traceparent") {
			t.Errorf("invalid traceparent %.40q reached the event: %.300s", tp, ev.data)
		}
	}
	r := main.do("POST", "/v1/requests", `{"tool":"deploy","arguments":{}}`, "traceparent", valid)
	r.want(t, "submit with a valid traceparent", http.StatusCreated)
	if ev := nextAbout(t, ch, str(r.body["id"])); !strings.Contains(ev.data, valid) {
		t.Errorf("the valid traceparent is not in the event: %s", ev.data)
	}
}

// TestAPILoneSurrogate: RFC 8785 and I-JSON forbid lone surrogates, in
// keys or values, at any depth: 400 InvalidRequest. A correctly paired
// surrogate is fine.
func TestAPILoneSurrogate(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	before := adminCount(t, url)
	for _, body := range []string{
		`{"tool":"deploy","arguments":{"a":"\ud800"}}`,
		`{"tool":"deploy","arguments":{"a":"\udc00"}}`,
		`{"tool":"deploy","arguments":{"\ud800":1}}`,
		`{"tool":"deploy","arguments":{"a":["x",{"b":"ok \udbff"}]}}`,
		`{"tool":"deploy","arguments":{"a":"\ud800\u0041"}}`,
		`{"tool":"deploy","arguments":{"a":"\ude00\ud83d"}}`,
		`{"tool":"deploy","arguments":{},"reason":"\ud800"}`,
	} {
		main.do("POST", "/v1/requests", body).wantProblem(t, body, http.StatusBadRequest, "InvalidRequest", "")
	}
	if got := adminCount(t, url); got != before {
		t.Errorf("lone surrogates created %d requests", got-before)
	}
	for _, body := range []string{
		`{"tool":"deploy","arguments":{"a":"\ud83d\ude00"}}`,
		`{"tool":"deploy","arguments":{"a":"\\ud800"}}`, // an escaped backslash, then text
	} {
		main.do("POST", "/v1/requests", body).want(t, body, http.StatusCreated)
	}
}

// TestAPIBearerAnyCase: the auth scheme is case-insensitive (RFC 7235).
func TestAPIBearerAnyCase(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	for _, h := range []string{"bearer " + tokPerson, "BEARER " + tokPerson, "BeArEr  " + tokPerson} {
		c := newClient(t, url, "")
		c.do("GET", "/v1/requests", nil, "Authorization", h).want(t, h, http.StatusOK)
	}
	c := newClient(t, url, "")
	c.do("GET", "/v1/requests", nil, "Authorization", "Basic "+tokPerson).wantProblem(t, "Basic", http.StatusUnauthorized, "Unauthenticated", "")
	c.do("GET", "/v1/requests", nil, "Authorization", "bearer").wantProblem(t, "no token", http.StatusUnauthorized, "Unauthenticated", "")
}

// TestAPIAbandonedLongPoll: a client that leaves a long-poll is counted as
// its own outcome (code 499 in countersign_http_requests_total), not a 503,
// and logs no warning.
func TestAPIAbandonedLongPoll(t *testing.T) {
	t.Parallel()
	logs := &logSink{}
	s := servertest.Start(t, servertest.WithConfig(acmeYAML), servertest.WithLogger(slog.New(logs)))
	atStart := len(logs.warnings()) // the start's own (the audit key's), not the poll's
	rec := newClient(t, s.URL, tokMain).pending()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/requests/"+str(rec["id"])+"?wait=50s", nil)
	req.Header.Set("Authorization", "Bearer "+tokMain)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	eventually(t, 10*time.Second, "the long-poll is held", func() bool { return s.App.Service.Hub().Waiting() == 1 })
	cancel()
	<-done
	route := `route="GET /v1/requests/{id}"`
	eventually(t, 10*time.Second, "the abandoned poll is counted with code 499", func() bool {
		return metricLine(t, s.URL, `countersign_http_requests_total{code="499",`+route+`} 1`)
	})
	if metricLine(t, s.URL, `countersign_http_requests_total{code="503",`+route+`}`) {
		t.Errorf("an abandoned long-poll was counted as 503")
	}
	if w := logs.warnings()[atStart:]; len(w) > 0 {
		t.Errorf("an abandoned long-poll logged warnings: %v", w)
	}
}

// metricLine reports whether /metrics has a line starting with prefix.
func metricLine(t *testing.T, url, prefix string) bool {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// logSink is a slog.Handler that keeps the messages at Warn and above.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logSink) WithGroup(string) slog.Handler            { return l }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		l.mu.Lock()
		defer l.mu.Unlock()
		attrs := map[string]any{}
		r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
		b, _ := json.Marshal(attrs)
		l.msgs = append(l.msgs, r.Message+" "+string(b))
	}
	return nil
}

func (l *logSink) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}
