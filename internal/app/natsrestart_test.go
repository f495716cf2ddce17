package app_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
)

// natsProcess is a standalone nats-server process with JetStream, which a
// test can kill -9 and start again on the same port and store.
type natsProcess struct {
	bin, store, addr string
	cmd              *exec.Cmd
}

// startNATSProcess builds nats-server from the module in go.mod (cached by
// the go build cache) and runs it on a free loopback port.
func startNATSProcess(t *testing.T) *natsProcess {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "nats-server")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput(); err != nil {
		t.Fatalf("go build nats-server: %v\n%s", err, out)
	}
	p := &natsProcess{bin: bin, store: t.TempDir(), addr: freeAddr(t)}
	p.start(t, "")
	t.Cleanup(p.kill)
	return p
}

func (p *natsProcess) url() string { return "nats://" + p.addr }

// start runs the server with JetStream on p.store; jsExtra adds to its
// jetstream block. It returns when the process was started, having waited
// until JetStream answers.
func (p *natsProcess) start(t *testing.T, jsExtra string) time.Time {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "nats.conf")
	body := fmt.Sprintf("listen: %q\njetstream { store_dir: %q\n%s }\n", p.addr, p.store, jsExtra)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(p.bin, "-c", conf)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	testutil.Eventually(t, 20*time.Second, func() bool {
		nc, err := nats.Connect(p.url(), nats.Timeout(time.Second))
		if err != nil {
			return false
		}
		defer nc.Close()
		_, err = nc.Request("$JS.API.INFO", nil, time.Second)
		return err == nil
	}, "nats-server answers JetStream requests")
	return started
}

// kill sends SIGKILL and reaps the process.
func (p *natsProcess) kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_, _ = p.cmd.Process.Wait()
	p.cmd = nil
}

func startOnNATS(t *testing.T, url, yaml string, log *slog.Logger) *app.App {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATSURL, cfg.Roles, cfg.Replicas = url, []string{"api", "deciders"}, 1 // one test server
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := launch(context.Background(), app.Options{Config: cfg, Listener: ln, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = a.Shutdown(ctx)
	})
	return a
}

func readyz(url string) int {
	code, _ := readyzBody(url)
	return code
}

func readyzBody(url string) (int, string) {
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sse is one open GET /v1/events.
type sse struct {
	mu     sync.Mutex
	events []sseEvent
}

type sseEvent struct{ id, typ, data string }

func openSSE(t *testing.T, url, token, lastID string) *sse {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/events: %v %v", err, resp)
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &sse{}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && ev.data != "":
				s.mu.Lock()
				s.events = append(s.events, ev)
				s.mu.Unlock()
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

// find returns the first event with this id.
func (s *sse) find(id string) (sseEvent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.events {
		if ev.id == id {
			return ev, true
		}
	}
	return sseEvent{}, false
}

func (s *sse) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, ev := range s.events {
		out = append(out, ev.id)
	}
	return out
}

func (s *sse) wait(t *testing.T, id string) sseEvent {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, func() bool { _, ok := s.find(id); return ok }, "SSE event "+id)
	ev, _ := s.find(id)
	return ev
}

// An external NATS server killed with -9 and started again on the same
// port and store heals: /readyz is 503 while it is down and 200 again
// after; the in-memory streams are re-created and the pending requests'
// work re-derived; work reaches the deciders; an open SSE stream keeps
// delivering and a client resuming with a Last-Event-ID from before the
// restart gets exactly what followed; and a long-poll held on one process
// sees a decision made on another promptly.
func TestExternalNATSRestartHeals(t *testing.T) {
	nproc := startNATSProcess(t)
	model := newScripted(t)
	model.answer(200, map[string]any{"verdict": "escalate", "quote": "", "evidence": []string{}, "rationale": "Needs a person."})
	yaml := judgeConfig(model.URL, "model")
	logA := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		logA = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	a := startOnNATS(t, nproc.url(), yaml, logA)
	b := startOnNATS(t, nproc.url(), yaml, slog.New(slog.NewTextHandler(io.Discard, nil)))
	urlA, urlB := "http://"+a.Addr(), "http://"+b.Addr()
	mainA, personB, progA := newClient(urlA, "dev-main"), newClient(urlB, "dev-person"), newClient(urlA, "dev-programmer")

	// Work messages on the person's decide subject, seen by a plain
	// subscriber. It must be back on the restarted server before the
	// processes re-derive their work (a core subscriber away then misses
	// it): it retries every 10 ms, the processes every 250 ms and more.
	nc, err := nats.Connect(nproc.url(), nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond), nats.ReconnectJitter(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var workMu sync.Mutex
	work := map[string]int{}
	if _, err := nc.Subscribe(events.DecideSubject("demo", domain.Ref{Kind: domain.KindPerson, ID: "u-1"}), func(m *nats.Msg) {
		workMu.Lock()
		work[m.Header.Get(nats.MsgIdHdr)]++
		workMu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	workSeen := func(id string) int { workMu.Lock(); defer workMu.Unlock(); return work[id] }

	live := openSSE(t, urlA, "dev-person", "")
	var r0, r1 record
	if code := mainA.do(t, "POST", "/v1/requests", refund(1), nil, &r0); code != 201 || r0.Status != "pending" {
		t.Fatalf("submit r0: %d %s", code, r0.Status)
	}
	mainA.do(t, "POST", "/v1/requests", refund(2), nil, &r1)
	created1 := live.wait(t, r1.ID+":0")
	testutil.Eventually(t, 10*time.Second, func() bool { return workSeen(r0.ID+":0") == 1 }, "r0's work published")

	woke := make(chan record, 1)
	go func() {
		var got record
		mainA.do(t, "GET", "/v1/requests/"+r1.ID+"?wait=60s", nil, nil, &got)
		woke <- got
	}()
	time.Sleep(100 * time.Millisecond) // the poll is held

	nproc.kill()
	testutil.Eventually(t, 10*time.Second, func() bool { return readyz(urlA) == 503 && readyz(urlB) == 503 }, "/readyz 503 while NATS is down")
	time.Sleep(500 * time.Millisecond)
	workMu.Lock()
	clear(work)
	workMu.Unlock()
	back := nproc.start(t, "")

	var answered time.Time
	testutil.Eventually(t, 15*time.Second, func() bool {
		code := personB.do(t, "POST", "/v1/requests/"+r1.ID, map[string]any{"expected": 0, "decision": "allow"}, nil, nil)
		answered = time.Now()
		return code == 200
	}, "b answers r1 once NATS is back")
	select {
	case got := <-woke:
		wakeAfter := time.Since(answered)
		t.Logf("NATS back → answer on b accepted: %v; → a's long-poll woke: %v (%v after the answer)",
			answered.Sub(back).Round(time.Millisecond), time.Since(back).Round(time.Millisecond), wakeAfter.Round(time.Millisecond))
		if got.Status != "approved" {
			t.Fatalf("a's long-poll woke with %q", got.Status)
		}
		if wakeAfter > 5*time.Second {
			t.Errorf("a's long-poll woke %v after b's answer, want about a second", wakeAfter)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a's long-poll did not wake on b's answer")
	}
	waitReady(t, back, urlA, urlB)

	// The pending request's work is re-derived into the new work stream.
	testutil.Eventually(t, 15*time.Second, func() bool { return workSeen(r0.ID+":0") >= 1 }, "r0's work re-derived after the restart")

	// New work reaches the model reviewer.
	calls := func() int { model.mu.Lock(); defer model.mu.Unlock(); return model.calls }
	before := calls()
	var r2 record
	if code := progA.do(t, "POST", "/v1/requests", refund(3), nil, &r2); code != 201 {
		t.Fatalf("submit r2: %d", code)
	}
	testutil.Eventually(t, 15*time.Second, func() bool {
		var got record
		progA.do(t, "GET", "/v1/requests/"+r2.ID, nil, nil, &got)
		return calls() > before && got.Approver != nil && got.Approver.Kind == "person"
	}, "the model reviewer gets new work and passes it up")

	// The open stream keeps delivering; a resumed one starts right after its id.
	var r3 record
	mainA.do(t, "POST", "/v1/requests", refund(4), nil, &r3)
	live.wait(t, r1.ID+":1")
	live.wait(t, r3.ID+":0")
	resumed := openSSE(t, urlB, "dev-person", created1.id)
	resumed.wait(t, r3.ID+":0")
	ids := resumed.ids()
	if len(ids) == 0 || ids[0] != r1.ID+":1" {
		t.Errorf("resumed after %s: first events %v, want %s:1 first", created1.id, ids, r1.ID)
	}
	for _, id := range ids {
		if id == created1.id || id == r0.ID+":0" {
			t.Errorf("resumed stream repeats %s", id)
		}
	}

	// NATS returns without room for the in-memory streams: the outbox
	// cannot heal, and /readyz says so although NATS answers; once NATS
	// has room again, it heals.
	nproc.kill()
	nproc.start(t, "max_memory_store: 1MB")
	for _, u := range []string{urlA, urlB} {
		testutil.Eventually(t, 10*time.Second, func() bool {
			code, body := readyzBody(u)
			return code == 503 && strings.Contains(body, events.EventsStream)
		}, "/readyz names the events stream that cannot be re-created")
	}
	time.Sleep(500 * time.Millisecond)
	for _, u := range []string{urlA, urlB} {
		if code, body := readyzBody(u); code != 503 {
			t.Fatalf("/readyz while the events stream cannot be re-created: %d %s", code, body)
		}
	}
	nproc.kill()
	waitReady(t, nproc.start(t, ""), urlA, urlB)
}

// waitReady waits for /readyz 200 on every url and logs how long it took
// from back, and the last reason it was not ready.
func waitReady(t *testing.T, back time.Time, urls ...string) {
	t.Helper()
	var notReady string
	testutil.Eventually(t, 15*time.Second, func() bool {
		for _, u := range urls {
			if code, body := readyzBody(u); code != 200 {
				notReady = body
				return false
			}
		}
		return true
	}, "/readyz 200 once healed")
	t.Logf("NATS back → ready: %v (last not ready: %s)", time.Since(back).Round(time.Millisecond), notReady)
}
