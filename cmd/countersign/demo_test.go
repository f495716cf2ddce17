package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
)

// issue 10's "done when", with the demo config: `countersign serve` with
// COUNTERSIGN_DEMO_WEBHOOK_URL sends a Slack-format message to a local
// receiver; its Approve button is a decision link, whose GET only shows
// the call and whose POST decides.
func TestDemoDecidesFromASlackLink(t *testing.T) {
	got := make(chan []byte, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	defer receiver.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := subprocess("serve", "--data", t.TempDir(), "--listen", addr, "--nats-listen", "off")
	cmd.Dir = t.TempDir() // no countersign.yaml: the demo
	cmd.Env = append(cmd.Env, "COUNTERSIGN_DEMO_WEBHOOK_URL="+receiver.URL, "COUNTERSIGN_DEMO_WEBHOOK_FORMAT=slack")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	base := "http://" + addr
	testutil.Eventually(t, 30*time.Second, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	}, "the demo server ready")

	body, _ := json.Marshal(map[string]any{"tool": "issue_refund", "arguments": map[string]any{"amount": 4900}})
	req, _ := http.NewRequest("POST", base+"/v1/requests", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer dev-main")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("submit: %v %v", err, resp)
	}
	var rec struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&rec)
	resp.Body.Close()

	approve := ""
	for approve == "" {
		select {
		case msg := <-got:
			if m := regexp.MustCompile(`"url":"(`+regexp.QuoteMeta(base)+`/d/[^"]+)"`).FindAllSubmatch(msg, -1); len(m) > 0 && strings.Contains(string(msg), "Approve") {
				approve = string(m[0][1])
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no Slack message with a decision link reached the receiver")
		}
	}
	for range 2 { // a GET (a mail scanner's, say) never decides
		page, err := http.Get(approve)
		if err != nil || page.StatusCode != 200 {
			t.Fatalf("GET the link: %v %v", err, page)
		}
		page.Body.Close()
	}
	if st := status(t, base, rec.ID); st != "pending" {
		t.Fatalf("after two GETs of the link: %s, want pending", st)
	}
	post, err := http.Post(approve, "application/x-www-form-urlencoded", nil)
	if err != nil || post.StatusCode != 200 {
		t.Fatalf("POST the link: %v %v", err, post)
	}
	post.Body.Close()
	if st := status(t, base, rec.ID); st != "approved" {
		t.Errorf("after the link's POST: %s, want approved", st)
	}
}

func status(t *testing.T, base, id string) string {
	req, _ := http.NewRequest("GET", base+"/v1/requests/"+id, nil)
	req.Header.Set("Authorization", "Bearer dev-person")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ Status string }
	_ = json.NewDecoder(resp.Body).Decode(&r)
	return r.Status
}
