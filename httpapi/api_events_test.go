package httpapi_test

import (
	"bufio"
	"net/http"
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
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the event stream ended before an event about %s", id)
			}
			if strings.Contains(ev.data, id) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no event about %s within 10s", id)
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
	// Another member's request is not shown.
	hidden := newClient(t, url, tokOther).pending()
	person.answer(rec, "allow", "").want(t, "answer", http.StatusOK)
	decided := nextAbout(t, ch, str(rec["id"]))
	if strings.Contains(decided.data, str(hidden["id"])) {
		t.Errorf("an event about another member's request reached u-1")
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
