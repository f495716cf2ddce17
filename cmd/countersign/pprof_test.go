package main

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// --pprof serves profiles only on a loopback address; anything else is
// refused before the server starts.
func TestServePprofLoopbackOnly(t *testing.T) {
	base := []string{"serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--nats-listen", "off"}
	out, err := subprocess(append(base, "--pprof", "0.0.0.0:0")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback address only") {
		t.Fatalf("--pprof 0.0.0.0:0: %v\n%s", err, out)
	}

	cmd := subprocess(append(base, "--pprof", "127.0.0.1:0")...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "pprof on "); i >= 0 {
				url <- strings.Fields(sc.Text()[i+len("pprof on "):])[0]
			}
		}
	}()
	select {
	case u := <-url:
		u = strings.Trim(u, `"`)
		resp, err := http.Get(u + "cmdline")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "serve") {
			t.Errorf("GET %scmdline: %d %q", u, resp.StatusCode, body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no pprof line in serve's log")
	}
}
