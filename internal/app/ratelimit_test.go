package app_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// Past max_long_polls a poll is refused with 429 RateLimited and
// Retry-After, and nothing else changes.
func TestLongPollLimit(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig("max_long_polls: 1\n"+config.DemoYAML))
	main := newClient(srv.URL, "dev-main")
	var r record
	main.do(t, "POST", "/v1/requests", refund(1), nil, &r)
	held := make(chan int, 1)
	go func() { held <- main.do(t, "GET", "/v1/requests/"+r.ID+"?wait=2s", nil, nil, nil) }()
	for srv.App.Service.Hub().Waiting() < 1 {
		time.Sleep(10 * time.Millisecond)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v1/requests/"+r.ID+"?wait=2s", nil)
	req.Header.Set("Authorization", "Bearer dev-main")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&p)
	if resp.StatusCode != 429 || p.Error != "RateLimited" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second poll: %d %q Retry-After %q; want 429 RateLimited with Retry-After", resp.StatusCode, p.Error, resp.Header.Get("Retry-After"))
	}
	if code := <-held; code != 200 {
		t.Fatalf("held poll: %d", code)
	}
	if code := main.do(t, "GET", "/v1/requests/"+r.ID+"?wait=1s", nil, nil, nil); code != 200 {
		t.Fatalf("a poll after the first ended: %d", code)
	}
}
