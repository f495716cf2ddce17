package app_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// jsonSink records the JSON bodies POSTed to it (Slack's incoming
// webhook, or a click's response_url).
type jsonSink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	msgs []map[string]any
}

func newSink(t *testing.T) *jsonSink {
	s := &jsonSink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		s.mu.Lock()
		s.msgs = append(s.msgs, m)
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *jsonSink) all() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.msgs...)
}

// buttons returns the elements of a message's actions block.
func buttons(m map[string]any) []map[string]any {
	blocks, _ := m["blocks"].([]any)
	for _, b := range blocks {
		if bm, _ := b.(map[string]any); bm["type"] == "actions" {
			var out []map[string]any
			for _, e := range bm["elements"].([]any) {
				out = append(out, e.(map[string]any))
			}
			return out
		}
	}
	return nil
}

func startSlack(t *testing.T, interactive bool) (*servertest.Server, *jsonSink) {
	sink := newSink(t)
	extra := ""
	top := linksTop
	if interactive {
		extra, top = "    slack_signing_secret_env: CS_TEST_SLACK_SECRET\n", ""
		t.Setenv("CS_TEST_SLACK_SECRET", slackSecret)
	}
	hooks := "      - {url: \"" + sink.srv.URL + "\", format: slack, events: [request.created]}\n"
	t.Setenv("CS_TEST_LINK_SECRET", "the decision links' test key")
	srv := servertest.Start(t, servertest.WithConfig(hookTenant(top, extra, hooks)))
	return srv, sink
}

// click posts a block_actions payload as Slack does, signed with secret
// at ts (Slack's v0 scheme, computed here from Slack's documentation).
func click(t *testing.T, srv *servertest.Server, secret string, ts time.Time, user, actionID, value, responseURL string) int {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": user},
		"actions": []any{map[string]any{"action_id": actionID, "value": value}}, "response_url": responseURL})
	body := "payload=" + url.QueryEscape(string(payload))
	stamp := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + stamp + ":" + body))
	req, _ := http.NewRequest("POST", srv.URL+"/v1/slack/interactions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func getRecord(t *testing.T, srv *servertest.Server, id string) record {
	t.Helper()
	var r record
	newClient(srv.URL, "hook-person").do(t, "GET", "/v1/requests/"+id, nil, nil, &r)
	return r
}

// The Slack message shows the call with interactive buttons; a click
// signed with the app's secret by the member's Slack user decides once
// and rewrites the message; bad signatures, stale timestamps and unmapped
// users change nothing.
func TestSlackClickDecidesOnce(t *testing.T) {
	srv, sink := startSlack(t, true)
	var r record
	req := refund(1)
	req["reason"] = "*bold* <!channel> duplicate"
	newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", req, nil, &r)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(sink.all()) == 1 }, "the Slack message")
	msg := sink.all()[0]
	raw, _ := json.Marshal(msg)
	if !strings.Contains(string(raw), "tools.call:issue_refund") || !strings.Contains(string(raw), "rich_text_preformatted") ||
		!strings.Contains(string(raw), "rich_text_quote") || !strings.Contains(string(raw), `\"amount\": 4900`) {
		t.Fatalf("message = %s", raw)
	}
	bs := buttons(msg)
	if len(bs) != 2 || bs[0]["action_id"] != "countersign_approve" || bs[1]["action_id"] != "countersign_deny" || bs[0]["url"] != nil {
		t.Fatalf("buttons = %+v", bs)
	}
	value := bs[0]["value"].(string)
	responses := newSink(t)
	now := time.Now()
	for name, code := range map[string]int{
		"bad signature":   click(t, srv, "not the secret", now, "U0001", "countersign_approve", value, responses.srv.URL),
		"stale timestamp": click(t, srv, slackSecret, now.Add(-6*time.Minute), "U0001", "countersign_approve", value, responses.srv.URL),
		"unmapped user":   click(t, srv, slackSecret, now, "U9999", "countersign_approve", value, responses.srv.URL),
	} {
		if got := getRecord(t, srv, r.ID); got.Status != "pending" || got.Revision != 0 {
			t.Fatalf("%s (%d) changed the request: %+v", name, code, got)
		}
		if name != "unmapped user" && code != 401 {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	if code := click(t, srv, slackSecret, now, "U0001", "countersign_approve", value, responses.srv.URL); code != 200 {
		t.Fatalf("click: %d", code)
	}
	got := getRecord(t, srv, r.ID)
	if got.Status != "approved" || got.Decision.By.Kind != "person" || got.Decision.By.ID != "u-1" || got.Revision != 1 {
		t.Fatalf("after the click: %+v", got)
	}
	if code := click(t, srv, slackSecret, now, "U0001", "countersign_deny", value, responses.srv.URL); code != 200 {
		t.Fatalf("second click: %d", code)
	}
	if again := getRecord(t, srv, r.ID); again.Status != "approved" || again.Revision != 1 {
		t.Fatalf("a second click changed the request: %+v", again)
	}
	rs := responses.all()
	var replaced int
	for _, m := range rs {
		if m["replace_original"] == true {
			replaced++
		}
	}
	if len(rs) != 3 || rs[0]["response_type"] != "ephemeral" || replaced != 2 {
		t.Fatalf("response_url got %+v", rs)
	}
	if !strings.Contains(rs[1]["text"].(string), "approved") {
		t.Errorf("the rewritten message says %q", rs[1]["text"])
	}
}

// Without the signing secret the buttons open the decision links.
func TestSlackButtonsAreLinksWithoutSecret(t *testing.T) {
	srv, sink := startSlack(t, false)
	var r record
	newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", refund(1), nil, &r)
	testutil.Eventually(t, 10*time.Second, func() bool { return len(sink.all()) == 1 }, "the Slack message")
	bs := buttons(sink.all()[0])
	if len(bs) != 2 || !strings.HasPrefix(bs[0]["url"].(string), "https://approvals.example.com/d/") || bs[0]["value"] != nil {
		t.Fatalf("buttons = %+v", bs)
	}
	if code := click(t, srv, slackSecret, time.Now(), "U0001", "countersign_approve", "v1 demo "+r.ID+" 0", ""); code != 401 {
		t.Fatalf("a click for a tenant without Slack: %d, want 401", code)
	}
}
