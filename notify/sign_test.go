package notify

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The example of the Standard Webhooks specification's reference
// libraries.
func TestSignMatchesTheSpecExample(t *testing.T) {
	key, err := ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	Sign(h, key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if got, want := h.Get(HeaderSignature), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature = %s, want %s", got, want)
	}
	if h.Get(HeaderID) != "msg_p5jXN8AQM9LWM0D4loKWxJek" || h.Get(HeaderTimestamp) != "1614265330" {
		t.Fatalf("headers = %v", h)
	}
	if raw, _ := ParseSecret("plain-key"); string(raw) != "plain-key" {
		t.Fatalf("a raw secret is the key as written: %q", raw)
	}
	if _, err := ParseSecret("whsec_!!"); err == nil {
		t.Fatal("a whsec_ secret that is not base64 must be refused")
	}
}

// The example of Slack's "Verifying requests from Slack".
func TestVerifySlackMatchesSlacksExample(t *testing.T) {
	secret := []byte("8f742231b10e8888abcd99yyyzzz85a5")
	body := []byte("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
	sig := "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	at := time.Unix(1531420618, 0)
	if err := VerifySlack(secret, "1531420618", sig, body, at.Add(time.Minute)); err != nil {
		t.Fatalf("Slack's example: %v", err)
	}
	for name, err := range map[string]error{
		"stale":       VerifySlack(secret, "1531420618", sig, body, at.Add(5*time.Minute+time.Second)),
		"future":      VerifySlack(secret, "1531420618", sig, body, at.Add(-5*time.Minute-time.Second)),
		"other body":  VerifySlack(secret, "1531420618", sig, append(body, 'x'), at),
		"no prefix":   VerifySlack(secret, "1531420618", strings.TrimPrefix(sig, "v0="), body, at),
		"bad stamp":   VerifySlack(secret, "01531420618", sig, body, at),
		"other key":   VerifySlack([]byte("x"), "1531420618", sig, body, at),
		"upper hex":   VerifySlack(secret, "1531420618", strings.ToUpper(sig), body, at),
		"empty sig":   VerifySlack(secret, "1531420618", "", body, at),
		"empty stamp": VerifySlack(secret, "", sig, body, at),
	} {
		if err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	tu := Tuning{BackoffBase: time.Second, BackoffMax: 8 * time.Second}
	for n, max := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 30: 8 * time.Second} {
		for i := 0; i < 50; i++ {
			if d := backoff(tu, n); d < max/2 || d > max {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", n, d, max/2, max)
			}
		}
	}
}

func TestWithLinks(t *testing.T) {
	got, err := withLinks([]byte(`{"id":"req_1"}`), &Pair{ApproveURL: "a", DenyURL: "d"})
	if err != nil || string(got) != `{"id":"req_1","links":{"approve_url":"a","deny_url":"d"}}` {
		t.Fatalf("withLinks = %s, %v", got, err)
	}
	if got, _ := withLinks([]byte(`{}`), &Pair{}); string(got) != `{"links":{"approve_url":"","deny_url":""}}` {
		t.Fatalf("withLinks on {} = %s", got)
	}
	if _, err := withLinks([]byte(`[1]`), &Pair{}); err == nil {
		t.Fatal("an array is not an object")
	}
}

// The progress floor stays below the oldest open write, and a restart
// skips only what was done.
func TestTrackerFloor(t *testing.T) {
	tr := newTracker(progress{Floor: 10})
	for _, s := range []uint64{12, 15, 20} {
		tr.read(s)
	}
	tr.markDone(15)
	tr.markDone(20)
	if string(tr.snapshot()) != `{"floor":11,"done":[15,20]}` {
		t.Fatalf("snapshot = %s", tr.snapshot())
	}
	again := newTracker(progress{Floor: 11, Done: []uint64{15, 20}})
	if !again.read(12) || again.read(15) || again.read(20) {
		t.Fatal("after a restart only 12 is open")
	}
	again.markDone(12)
	if string(again.snapshot()) != `{"floor":20}` {
		t.Fatalf("snapshot = %s", again.snapshot())
	}
}
