package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestAPIHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	url := startDemo(t)
	c := newClient(t, url, "")
	c.do("GET", "/healthz", nil).want(t, "healthz", http.StatusOK)
	c.do("GET", "/readyz", nil).want(t, "readyz", http.StatusOK)
	// One call so that the HTTP counters have a sample.
	newClient(t, url, "dev-main").submit(map[string]any{"tool": "read_file", "arguments": map[string]any{}})
	r := c.do("GET", "/metrics", nil).want(t, "metrics", http.StatusOK)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("metrics Content-Type %q, want text/plain (Prometheus text format)", ct)
	}
	body := string(r.raw)
	for _, want := range []string{"# HELP ", "# TYPE ", "countersign_http_requests_total"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
