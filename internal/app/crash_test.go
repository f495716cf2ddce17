package app_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

// buildBinary builds cmd/countersign once for the subprocess tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "countersign")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/countersign").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startProcess starts the binary on the demo tenant, its quotas lifted
// (a thousand submits at once).
func startProcess(t *testing.T, bin, dir, addr string) *exec.Cmd {
	t.Helper()
	return serveProcess(t, bin, dir, addr, testutil.Unthrottled(config.DemoYAML))
}

// serveProcess writes yaml as dir's countersign.yaml, starts the binary's
// serve on it with its data in dir, and waits until it is ready; the test's
// end kills it.
func serveProcess(t *testing.T, bin, dir, addr, yaml string) *exec.Cmd {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "countersign.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--data", filepath.Join(dir, "data"), "--listen", addr, "--nats-listen", "off")
	cmd.Dir = dir
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	testutil.Eventually(t, 30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, "server ready")
	return cmd
}

// A thousand waiting requests survive kill -9: after a restart on the same
// data dir all are pending, their idempotency keys still answer with the
// same request, and each can be decided exactly once.
func TestCrashKeepsPendingRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash test")
	}
	bin, dir, addr := buildBinary(t), t.TempDir(), freeAddr(t)
	cmd := startProcess(t, bin, dir, addr)
	url := "http://" + addr
	prog := newClient(url, "dev-programmer")
	const n = 1000
	ids := make([]string, n)
	parallel(n, 32, func(i int) {
		var r record
		if code := prog.do(t, "POST", "/v1/requests", refund(i), map[string]string{"Idempotency-Key": fmt.Sprint("key-", i)}, &r); code != 201 {
			t.Errorf("submit %d: status %d", i, code)
		}
		ids[i] = r.ID
	})
	staged, _ := os.Readlink(stagingLink(filepath.Join(dir, "data"), "requests"))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	startProcess(t, bin, dir, addr)
	if staged != "" { // batches staged in memory: the restart removed the dead process's
		if _, err := os.Stat(staged); !os.IsNotExist(err) {
			t.Errorf("the killed process's batch staging %s: %v; want it removed", staged, err)
		}
	}
	main := newClient(url, "dev-main")
	parallel(n, 32, func(i int) { checkSurvivor(t, prog, main, i, ids[i]) })
}

func checkSurvivor(t *testing.T, prog, main *client, i int, id string) {
	var r record
	if code := prog.do(t, "GET", "/v1/requests/"+id, nil, nil, &r); code != 200 || r.Status != "pending" {
		t.Errorf("request %d after restart: status %d, %s; want 200 pending", i, code, r.Status)
		return
	}
	var again record
	if code := prog.do(t, "POST", "/v1/requests", refund(i), map[string]string{"Idempotency-Key": fmt.Sprint("key-", i)}, &again); code != 200 || again.ID != id {
		t.Errorf("repeat of key %d: status %d id %s; want 200 and %s", i, code, again.ID, id)
	}
	var decided record
	if code := main.do(t, "POST", "/v1/requests/"+id, map[string]any{"expected": 0, "decision": "deny"}, nil, &decided); code != 200 || decided.Status != "denied" {
		t.Errorf("deny %d: status %d, %s", i, code, decided.Status)
	}
	if code := main.do(t, "POST", "/v1/requests/"+id, map[string]any{"expected": 0, "decision": "allow"}, nil, nil); code != 409 {
		t.Errorf("second decision on %d: status %d, want 409", i, code)
	}
}

func parallel(n, workers int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
