package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// startSlackAt is startSlack's interactive server on clock.
func startSlackAt(t *testing.T, clock *testutil.Clock) (*servertest.Server, *jsonSink) {
	sink := newSink(t)
	t.Setenv("CS_TEST_SLACK_SECRET", slackSecret)
	hooks := "      - {url: \"" + sink.srv.URL + "\", format: slack, events: [request.created]}\n"
	yaml := hookTenant("", "    slack_signing_secret_env: CS_TEST_SLACK_SECRET\n", hooks)
	return servertest.Start(t, servertest.WithConfig(yaml), servertest.WithClock(clock)), sink
}

// slackValue submits body as hook-agent and returns the record and its
// Slack message's Approve button value.
func slackValue(t *testing.T, srv *servertest.Server, sink *jsonSink, body map[string]any) (record, string) {
	t.Helper()
	var r record
	if code := newClient(srv.URL, "hook-agent").do(t, "POST", "/v1/requests", body, nil, &r); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	var value string
	testutil.Eventually(t, 10*time.Second, func() bool {
		for _, m := range sink.all() {
			if bs := buttons(m); len(bs) == 2 && strings.Contains(bs[0]["value"].(string), r.ID) {
				value = bs[0]["value"].(string)
			}
		}
		return value != ""
	}, "the Slack message")
	return r, value
}

// A correctly signed click whose timestamp is one second outside Slack's
// five-minute window, sent through POST /v1/slack/interactions, is 401
// and changes nothing: the record keeps its revision, nothing is posted
// to its response_url, and no event is published. A click exactly five
// minutes old is inside the window and decides. The server's clock is
// stepped, so the window is tested to the second.
func TestSlackStaleClickThroughHTTPChangesNothing(t *testing.T) {
	clock := testutil.NewClock(time.Now().Truncate(time.Second))
	srv, sink := startSlackAt(t, clock)
	r, value := slackValue(t, srv, sink, refund(1))
	responses := newSink(t)
	now := clock.Now()
	for name, at := range map[string]time.Time{"5m01s old": now.Add(-5*time.Minute - time.Second), "5m01s ahead": now.Add(5*time.Minute + time.Second)} {
		if code := click(t, srv, slackSecret, at, "U0001", "countersign_deny", value, responses.srv.URL); code != 401 {
			t.Errorf("%s: %d, want 401", name, code)
		}
		if got := getRecord(t, srv, r.ID); got.Status != "pending" || got.Revision != 0 {
			t.Fatalf("%s changed the request: %+v", name, got)
		}
	}
	if code := click(t, srv, slackSecret, now.Add(-5*time.Minute), "U0001", "countersign_approve", value, responses.srv.URL); code != 200 {
		t.Fatalf("a click 5m old: %d, want 200", code)
	}
	if got := getRecord(t, srv, r.ID); got.Status != "approved" || got.Revision != 1 {
		t.Fatalf("after the click 5m old: %+v", got)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return len(about(streamMsgs(t, srv.App.Broker.JS, events.EventsStream, events.EventsFilter), r.ID)) >= 2
	}, "the decided event")
	var types []string
	for _, m := range about(streamMsgs(t, srv.App.Broker.JS, events.EventsStream, events.EventsFilter), r.ID) {
		types = append(types, m.Headers().Get("ce-type"))
	}
	if strings.Join(types, ",") != events.TypeRequestCreated+","+events.TypeRequestDecided {
		t.Fatalf("events about the request: %v, want created then one decided", types)
	}
	if rs := responses.all(); len(rs) != 1 || rs[0]["replace_original"] != true {
		t.Fatalf("response_url got %+v, want only the approving click's rewrite", rs)
	}
}

// A click that may not answer gets a note saying why, never "Try again",
// and changes nothing: another member's request, a protected write
// nobody watches, a request that ended (the message is rewritten).
func TestSlackRefusedClickSaysWhy(t *testing.T) {
	clock := testutil.NewClock(time.Now().Truncate(time.Second))
	srv, sink := startSlackAt(t, clock)
	r, value := slackValue(t, srv, sink, refund(1))
	pw := map[string]any{"tool": "Write", "session": "ses-pw", "arguments": map[string]any{"file_path": ".git/config"},
		"subject": map[string]any{"kind": "tool", "protected_write": true}, "timeout": "1h"}
	p, pwValue := slackValue(t, srv, sink, pw)
	now := clock.Now()
	for _, c := range []struct{ name, user, value, id, want string }{
		{"another member", "U0002", value, r.ID, "not yours to answer"},
		{"a protected write nobody watches", "U0001", pwValue, p.ID, "protected write"},
	} {
		responses := newSink(t)
		if code := click(t, srv, slackSecret, now, c.user, "countersign_approve", c.value, responses.srv.URL); code != 200 {
			t.Fatalf("%s: %d", c.name, code)
		}
		rs := responses.all()
		if len(rs) != 1 || rs[0]["response_type"] != "ephemeral" {
			t.Fatalf("%s: response_url got %+v", c.name, rs)
		}
		if text, _ := rs[0]["text"].(string); !strings.Contains(text, c.want) || strings.Contains(text, "Try again") {
			t.Errorf("%s: the note says %q, want it to say %q", c.name, text, c.want)
		}
		if got := getRecord(t, srv, c.id); got.Status != "pending" || got.Revision != 0 {
			t.Fatalf("%s changed the request: %+v", c.name, got)
		}
	}
	answer(t, srv, "hook-person", r.ID, 0, "deny")
	responses := newSink(t)
	click(t, srv, slackSecret, now, "U0001", "countersign_approve", value, responses.srv.URL)
	rs := responses.all()
	if len(rs) != 1 || rs[0]["replace_original"] != true || !strings.Contains(rs[0]["text"].(string), "denied") {
		t.Fatalf("a click on an ended request: response_url got %+v", rs)
	}
}
