package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// slowClient opens a connection to the server at url and sends a POST
// whose headers promise a body it never finishes.
func slowClient(t *testing.T, url, token string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	head := "POST /v1/requests HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
		"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"to"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatalf("write: %v", err)
	}
	return conn
}

// answerThenClose reads what the server sends until it closes the
// connection, failing if it does not within 5s.
func answerThenClose(t *testing.T, what string, conn net.Conn) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("%s: the server held the connection: %v (read %q)", what, err, b)
	}
	return string(b)
}

// TestAPISlowBodyTimedOut: a body that trickles in is cut at the read
// timeout (http_timeouts.read), and the connection is closed.
func TestAPISlowBodyTimedOut(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, servertest.WithConfig("http_timeouts: {read: 300ms}\n"+acmeYAML)).URL
	answerThenClose(t, "slow body", slowClient(t, url, tokMain))
}

// TestAPIBadTokenNotWaitingForBody: a bad token is 401 at once, without
// the server waiting for the body, and the connection is closed.
func TestAPIBadTokenNotWaitingForBody(t *testing.T) {
	t.Parallel()
	url := startAcme(t) // the default read timeout, far longer than 5s
	got := answerThenClose(t, "bad token", slowClient(t, url, "not-a-token"))
	if !strings.HasPrefix(got, "HTTP/1.1 401 ") || !strings.Contains(got, "Unauthenticated") {
		t.Errorf("bad token with a slow body: got %.200q, want 401 Unauthenticated", got)
	}
}

// TestAPIWaitsOutliveTimeouts: a long-poll and an event stream last past
// the server's read and write timeouts (they set their own deadlines).
func TestAPIWaitsOutliveTimeouts(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, servertest.WithConfig("http_timeouts: {read: 200ms, write: 200ms}\n"+acmeYAML)).URL
	main := newClient(t, url, tokMain)
	ch, _ := openEvents(t, url, tokPerson, "")
	rec := main.pending()
	nextAbout(t, ch, str(rec["id"]))
	r := main.do("GET", "/v1/requests/"+str(rec["id"])+"?wait=1s", nil).want(t, "long-poll past the timeouts", http.StatusOK)
	if got := str(r.body["status"]); got != "pending" {
		t.Errorf("long-poll: status %q, want pending", got)
	}
	later := main.pending() // more than a second after the stream opened
	nextAbout(t, ch, str(later["id"]))
}

// TestAPIConnectionBound: past max_connections, slow clients cannot take
// /healthz down: it still answers 200 on the spare connections, while
// other requests get a fast 429 RateLimited; beyond the spare ones,
// connections are closed at once. When the slow clients leave, service
// resumes.
func TestAPIConnectionBound(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, servertest.WithConfig("max_connections: 2\n"+acmeYAML)).URL
	slow := []net.Conn{slowClient(t, url, tokMain), slowClient(t, url, tokMain)}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", url+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := fresh.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After") + " " + string(b)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(p, ""); code != http.StatusOK {
			t.Errorf("%s with the bound exhausted: %d %s, want 200", p, code, body)
		}
	}
	code, body := get("/v1/requests", tokPerson)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "RateLimited") || strings.HasPrefix(body, " ") {
		t.Errorf("a request past the bound: %d %q, want 429 RateLimited with Retry-After", code, body)
	}

	// Fill the spare connections too: the next one is closed at once.
	for i := 0; i < 64; i++ {
		slow = append(slow, slowClient(t, url, tokMain))
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := bufio.NewReader(conn).ReadString('\n'); err == nil {
		t.Errorf("a connection past every slot was served: %q", line)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("a connection past every slot was held open, not closed")
	}

	for _, c := range slow {
		c.Close()
	}
	eventually(t, 10*time.Second, "requests are served again once the slow clients leave", func() bool {
		code, _ := get("/v1/requests", tokPerson)
		return code == http.StatusOK
	})
}
