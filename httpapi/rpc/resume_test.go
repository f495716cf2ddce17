package rpc_test

import (
	"net/http"
	"testing"
)

// TestResumeMissesNothingRepeatsNothing: a client that reconnects with the
// eventCursor of the last notification it saw receives what happened
// while it was away (a request created, one decided over HTTP) and
// nothing it saw before: the next notification after those is a request
// created afterwards.
func TestResumeMissesNothingRepeatsNothing(t *testing.T) {
	t.Parallel()
	s := start(t)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"sessionIds": []string{"ses-r"}})
	a := submit(t, s, tokMain, map[string]any{"tool": "a", "session": "ses-r"})["id"].(string)
	b := submit(t, s, tokMain, map[string]any{"tool": "b", "session": "ses-r"})["id"].(string)
	w.expect("approval/requested", a)
	last := w.expect("approval/requested", b).Params["eventCursor"].(string)
	_ = w.c.CloseNow()

	// While away: a is denied over HTTP, c is created, and a request of
	// another session is created (out of scope).
	rec := record(t, s, tokPerson, a)
	if code, data := s.API(t).Do(http.MethodPost, "/v1/requests/"+a, tokPerson, map[string]any{"expected": rec["revision"], "decision": "deny"}); code != http.StatusOK {
		t.Fatalf("deny a: %d %s", code, data)
	}
	submit(t, s, tokMain, map[string]any{"tool": "elsewhere", "session": "ses-other"})
	c := submit(t, s, tokMain, map[string]any{"tool": "c", "session": "ses-r"})["id"].(string)

	w = dial(t, s.URL, tokPerson)
	res := w.subscribe(map[string]any{"sessionIds": []string{"ses-r"}, "viewCursor": last})
	if res["resumed"] != true || res["viewCursor"] != last {
		t.Fatalf("resume result %v", res)
	}
	if r := w.expect("approval/resolved", a); r.Params["status"] != "denied" {
		t.Errorf("a resolved %v", r.Params["status"])
	}
	cn := w.expect("approval/requested", c)
	if cn.Params["judgeEscalated"] != false {
		t.Errorf("judgeEscalated %v", cn.Params["judgeEscalated"])
	}
	d := submit(t, s, tokMain, map[string]any{"tool": "d", "session": "ses-r"})["id"].(string)
	w.expect("approval/requested", d) // nothing repeated in between

	// A cursor the server does not know starts over with a snapshot of
	// what is pending: b, c, d in the order they were written.
	w2 := dial(t, s.URL, tokPerson)
	res = w2.subscribe(map[string]any{"sessionIds": []string{"ses-r"}, "viewCursor": "req_01JC000000000000000000000:4"})
	if res["resumed"] != false || res["viewCursor"] != "" {
		t.Fatalf("unknown cursor: %v", res)
	}
	for _, id := range []string{b, c, d} {
		w2.expect("approval/requested", id)
	}
}

// TestSnapshotDoesNotRepeatLive: a subscription opened while requests are
// pending sends each once (snapshot), then only later changes.
func TestSnapshotDoesNotRepeatLive(t *testing.T) {
	t.Parallel()
	s := start(t)
	a := submit(t, s, tokMain, map[string]any{"tool": "a", "session": "ses-s"})["id"].(string)
	w := dial(t, s.URL, tokPerson)
	w.subscribe(map[string]any{"inbox": true})
	n := w.expect("approval/requested", a)
	if n.Params["eventCursor"] != a+":0" {
		t.Errorf("snapshot eventCursor %v", n.Params["eventCursor"])
	}
	b := submit(t, s, tokMain, map[string]any{"tool": "b"})["id"].(string)
	w.expect("approval/requested", b)
}
