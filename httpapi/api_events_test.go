package httpapi_test

import (
	"bufio"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sseEvent is one Server-Sent Event.
type sseEvent struct{ id, event, data string }

// openEvents opens GET /v1/events and returns its events on a channel.
func openEvents(t *testing.T, url, token, lastID string) (<-chan sseEvent, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	hr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /v1/events: %v", err)
	}
	t.Cleanup(func() { hr.Body.Close() })
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(hr.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.data != "" || ev.event != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id:"):
				ev.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.HasPrefix(line, "event:"):
				ev.event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				ev.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	return ch, hr
}

// nextAbout waits for an event whose data mentions id.
func nextAbout(t *testing.T, ch <-chan sseEvent, id string) sseEvent {
	t.Helper()
	return nextMatching(t, ch, "about "+id, func(ev sseEvent) bool { return strings.Contains(ev.data, id) })
}

// nextMatching waits up to 10s for the next event that match accepts.
func nextMatching(t *testing.T, ch <-chan sseEvent, what string, match func(sseEvent) bool) sseEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the event stream ended before an event %s", what)
			}
			if match(ev) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no event %s within 10s", what)
		}
	}
}

// TestAPIEvents: GET /v1/events streams the approval events the caller may
// see, resumable with Last-Event-ID (SPEC §5).
func TestAPIEvents(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	ch, hr := openEvents(t, url, tokPerson, "")
	if hr.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/events: status %d, want 200", hr.StatusCode)
	}
	if ct := hr.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	rec := main.pending()
	created := nextAbout(t, ch, str(rec["id"]))
	if created.id == "" {
		t.Errorf("event without an id: %+v", created)
	}
	// Another member's request is not shown: the very next event u-1 gets
	// is its own request's decision, not the other member's creation
	// (which was stored first). u-2's own stream does get it.
	other, _ := openEvents(t, url, tokPerson2, "")
	hidden := newClient(t, url, tokOther).pending()
	nextAbout(t, other, str(hidden["id"]))
	person.answer(rec, "allow", "").want(t, "answer", http.StatusOK)
	decided := nextMatching(t, ch, "at all", func(sseEvent) bool { return true })
	if !strings.Contains(decided.data, str(rec["id"])) || strings.Contains(decided.data, str(hidden["id"])) {
		t.Errorf("u-1's next event is not its own request's decision: %s %s", decided.event, decided.data)
	}
	hidden2 := newClient(t, url, tokOther).pending()
	if ev := nextMatching(t, other, "at all", func(sseEvent) bool { return true }); !strings.Contains(ev.data, str(hidden2["id"])) {
		t.Errorf("u-2's next event is not its own next request: %s %s", ev.event, ev.data)
	}

	// Resume after the created event: the decided event is replayed.
	ch2, hr2 := openEvents(t, url, tokPerson, created.id)
	if hr2.StatusCode != http.StatusOK {
		t.Fatalf("resume: status %d, want 200", hr2.StatusCode)
	}
	again := nextAbout(t, ch2, str(rec["id"]))
	if again.id != decided.id {
		t.Errorf("resumed stream's first event about the request = %q, want the decided event %q", again.id, decided.id)
	}
}

// nextWith waits for the next event whose id matches re.
func nextWith(t *testing.T, ch <-chan sseEvent, re *regexp.Regexp) sseEvent {
	t.Helper()
	return nextMatching(t, ch, "with id "+re.String(), func(ev sseEvent) bool { return re.MatchString(ev.id) })
}

// TestAPIEventIDs: an event's id is its change's own id (the Nats-Msg-Id:
// <request id>:<revision>, <grant id>:created|revoked), and Last-Event-ID
// resumes right after that change, whichever kind it is.
func TestAPIEventIDs(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	ch, _ := openEvents(t, url, tokPerson, "")
	rec := main.pending()
	id := str(rec["id"])
	if ev := nextAbout(t, ch, id); ev.id != id+":0" || ev.event != "dev.countersign.request.created" {
		t.Fatalf("created event: id %q type %q, want %s:0", ev.id, ev.event, id)
	}
	person.answer(rec, "allow", "lifetime").want(t, "allow for good", http.StatusOK)
	// The decision and the grant it leaves are written to two streams: the
	// feed may carry them in either order.
	var decided, grant sseEvent
	grantID := regexp.MustCompile(`^grt_[0-9A-Z]{26}:created$`)
	for decided.id == "" || grant.id == "" {
		ev := nextAbout(t, ch, id)
		switch {
		case grantID.MatchString(ev.id):
			grant = ev
		case decided.id == "":
			decided = ev
		}
	}
	if decided.id != id+":1" || decided.event != "dev.countersign.request.decided" {
		t.Fatalf("decided event: id %q type %q, want %s:1", decided.id, decided.event, id)
	}

	// After the request's created event: its decided event comes next.
	resumed, _ := openEvents(t, url, tokPerson, id+":0")
	ev := nextAbout(t, resumed, id)
	for grantID.MatchString(ev.id) { // the grant's stream may resume first
		ev = nextAbout(t, resumed, id)
	}
	if ev.id != id+":1" {
		t.Errorf("resumed after %s:0: first change of it %q, want %s:1", id, ev.id, id)
	}
	// After the grant's created event: the grant is not repeated, and the
	// next change arrives.
	afterGrant, _ := openEvents(t, url, tokPerson, grant.id)
	next := str(main.pending("tool", "release")["id"])
	for ev := range afterGrant {
		if ev.id == grant.id {
			t.Fatalf("resumed after %s: it is repeated", grant.id)
		}
		if ev.id == next+":0" {
			break
		}
	}
}

// TestAPIEventsUnknownLastEventID: a Last-Event-ID that names no change
// the caller may see (garbage, an old numeric position, an unknown id,
// another member's request) starts the stream from now, says so in a
// comment, and never replays older events.
func TestAPIEventsUnknownLastEventID(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main := newClient(t, url, tokMain)
	old := str(main.pending()["id"])
	hidden := str(newClient(t, url, tokOther).pending()["id"])
	for _, last := range []string{"garbage", "42", "req_01JC0000000000000000000000:0", old + ":7", hidden + ":0", "grt_01JC0000000000000000000000:created", old + ":00"} {
		req, _ := http.NewRequest("GET", url+"/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+tokPerson)
		req.Header.Set("Last-Event-ID", last)
		hr, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(hr.Body)
		line, _ := br.ReadString('\n')
		if hr.StatusCode != http.StatusOK || !strings.HasPrefix(line, ": Last-Event-ID not found") {
			t.Errorf("Last-Event-ID %q: status %d, first line %q; want 200 and the not-found comment", last, hr.StatusCode, line)
		}
		hr.Body.Close()
	}
	ch, _ := openEvents(t, url, tokPerson, "req_01JC0000000000000000000000:0")
	fresh := str(main.pending()["id"])
	if ev := nextWith(t, ch, regexp.MustCompile(`:0$`)); ev.id != fresh+":0" {
		t.Errorf("first event after an unknown id: %q, want the new request's %s:0 (nothing older)", ev.id, fresh)
	}
}
