package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// Two deciders processes on one NATS: one writes the audit log
// (countersign_audit_writer_active is 1 in it, 0 in the other); when it
// stops, the other takes over, and the log holds each request's creation
// once, from before and after the handover alike.
func TestAuditWriterRunsInOneProcess(t *testing.T) {
	url := startExternalNATS(t)
	var procs []*app.App
	for range 2 {
		path := filepath.Join(t.TempDir(), "countersign.yaml")
		writeConfig(t, path, liveFull)
		procs = append(procs, startLiveRole(t, url, path, "api", "deciders"))
	}
	active := func(p *app.App) float64 { return metric(t, "http://"+p.Addr(), "countersign_audit_writer_active") }
	var writer int
	testutil.Eventually(t, 15*time.Second, func() bool {
		a, b := active(procs[0]), active(procs[1])
		writer = map[bool]int{true: 0, false: 1}[a == 1]
		return a+b == 1
	}, "the audit writer active in exactly one process")
	other := procs[1-writer]
	var before, after record
	if code := newClient("http://"+other.Addr(), "live-a").do(t, "POST", "/v1/requests", refund(1), nil, &before); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := procs[writer].Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 15*time.Second, func() bool { return active(other) == 1 }, "the other process writing once the writer stopped")
	if code := newClient("http://"+other.Addr(), "live-a").do(t, "POST", "/v1/requests", refund(2), nil, &after); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	created := func() map[string]int {
		req, _ := http.NewRequest("GET", "http://"+other.Addr()+"/v1/audit", nil)
		req.Header.Set("Authorization", "Bearer live-admin")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n := map[string]int{}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e struct{ Type, Subject string }
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "dev.countersign.request.created" {
				n[e.Subject]++
			}
		}
		return n
	}
	testutil.Eventually(t, 15*time.Second, func() bool { n := created(); return n[before.ID] > 0 && n[after.ID] > 0 },
		"both requests' creations in the audit log")
	if n := created(); n[before.ID] != 1 || n[after.ID] != 1 {
		t.Fatalf("creations in the audit log: %v, want each request's once", n)
	}
}
