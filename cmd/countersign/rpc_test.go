package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// docSession is the example session of docs/integrators/live-protocol.md: the
// command line, the lines sent (>), the lines received (<) and the
// submission made meanwhile (# curl).
type docSession struct {
	command  []string
	sent     []string
	received []string
	curl     string
}

func readDocSession(t *testing.T) docSession {
	t.Helper()
	b, err := os.ReadFile("../../docs/integrators/live-protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "\n$ countersign rpc")
	if !ok {
		t.Fatal("docs/integrators/live-protocol.md has no `$ countersign rpc` session")
	}
	block, _, _ = strings.Cut("$ countersign rpc"+block, "\n```")
	var d docSession
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(line, "$ "):
			d.command = shellWords(strings.TrimPrefix(line, "$ "))
		case strings.HasPrefix(line, "> "):
			d.sent = append(d.sent, strings.TrimPrefix(line, "> "))
		case strings.HasPrefix(line, "< "):
			d.received = append(d.received, strings.TrimPrefix(line, "< "))
		case strings.HasPrefix(line, "# curl "):
			d.curl = line
		}
	}
	if len(d.command) < 2 || len(d.sent) == 0 || len(d.received) == 0 || d.curl == "" {
		t.Fatalf("the doc's session does not parse: %+v", d)
	}
	return d
}

// shape is what of a JSON-RPC message must match the doc: a response's
// id and whether it is a result or an error (and its status or code), a
// notification's method (and its status).
func shape(t *testing.T, line string) string {
	t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result struct {
			Status string `json:"status"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
		Params struct {
			Status  string `json:"status"`
			Current *struct {
				SourceIndex int `json:"sourceIndex"`
			} `json:"currentRequirementId"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %s", line)
	}
	switch {
	case m.Method != "" && m.Params.Current != nil:
		return m.Method + " stage " + string(rune('0'+m.Params.Current.SourceIndex))
	case m.Method != "":
		return m.Method + " " + m.Params.Status
	case m.Error != nil:
		return "error " + string(m.ID) + " " + string(rune('0'+m.Error.Code%10))
	}
	return "result " + string(m.ID) + " " + m.Result.Status
}

var docRequestID = regexp.MustCompile(`req_[0-9A-Z]{26}`)

// issue 36: docs/integrators/live-protocol.md's example runs as written, with the
// client the binary ships, against the demo: the same messages come back
// (with this run's request id).
func TestLiveProtocolDocExampleRuns(t *testing.T) {
	d := readDocSession(t)
	if d.command[0] != "countersign" || d.command[1] != "rpc" {
		t.Fatalf("the doc's session runs %q", d.command)
	}
	if !strings.Contains(d.curl, cliDefaultURL+"/v1/requests") {
		t.Errorf("the doc submits to %q, not serve's default %s", d.curl, cliDefaultURL)
	}
	srv := servertest.Start(t)
	cmd := subprocess(d.command[1:]...)
	cmd.Env = append(cmd.Env, "COUNTERSIGN_URL="+srv.URL) // the doc's server is on 8080; this one is on a free port
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	await := func(prefix string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("rpc ended before %q; got %q; stderr %s", prefix, got, stderr.String())
				}
				got = append(got, l)
				if strings.HasPrefix(shape(t, l), prefix) {
					return l
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("no %q within 15s; got %q", prefix, got)
			}
		}
	}
	send := func(line, id string) {
		if _, err := stdin.Write([]byte("> " + docRequestID.ReplaceAllString(line, id) + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	send(d.sent[0], "")
	await("result 1")
	// The submission made meanwhile, with the doc's token and body.
	tok := regexp.MustCompile(`Bearer ([^']+)'`).FindStringSubmatch(d.curl)
	body := regexp.MustCompile(`-d '([^']+)'`).FindStringSubmatch(d.curl)
	if tok == nil || body == nil {
		t.Fatalf("the doc's curl does not parse: %s", d.curl)
	}
	var rec struct{ ID string }
	cliHTTP(t, srv, http.MethodPost, "/v1/requests", tok[1], body[1], &rec)
	await("approval/requested stage 0")
	for _, line := range d.sent[1:] {
		send(line, rec.ID)
	}
	await("approval/resolved denied") // before stdin ends: the linger is no timed assertion
	stdin.Close()
	done := make(chan error, 1)
	go func() {
		for l := range lines {
			got = append(got, l)
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("rpc: %v; stderr %s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("rpc did not end after its answers; got %q", got)
	}
	want := map[string]int{}
	for _, l := range d.received {
		want[shape(t, l)]++
	}
	for _, l := range got {
		want[shape(t, l)]--
	}
	for s, n := range want {
		if n != 0 {
			t.Errorf("%q: %+d against the doc\ndoc: %q\ngot: %q", s, n, d.received, got)
		}
	}
}

// countersign rpc refuses what is not one JSON object (said on stderr,
// not sent) and goes on; a token the server refuses ends it with exit 1
// and the status.
func TestRPCBadInput(t *testing.T) {
	srv := servertest.Start(t)
	run := func(token, stdin string) (int, string, string) {
		var out, errb strings.Builder
		env := cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
			return map[string]string{"COUNTERSIGN_URL": srv.URL, "COUNTERSIGN_TOKEN": token}[k]
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		code := rpcClient(ctx, []string{"--linger", "0s"}, strings.NewReader(stdin), env)
		return code, out.String(), errb.String()
	}
	code, out, errs := run(servertest.TokenPerson, "not json\n# a comment\n\n> {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"approval/subscribe\",\"params\":{\"inbox\":true}}\n[1,2]\n")
	if code != cliExitOK || !strings.Contains(errs, "line 1 is not one JSON object; not sent") ||
		!strings.Contains(errs, "line 5 is not one JSON object") || !strings.Contains(out, `"id":7,"result"`) {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("a refused line reached the server: %s", out)
	}
	code, _, errs = run("not-a-token", "")
	if code != cliExitRefused || !strings.Contains(errs, "401") {
		t.Errorf("a bad token: exit %d, stderr %s", code, errs)
	}
}
