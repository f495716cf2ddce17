package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// takenPort is a loopback address something else already listens on,
// held until the test ends.
func takenPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// freePort is a loopback address nothing listens on (taken, then let go).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveExit runs `countersign serve args` in an empty directory (the demo)
// and returns its exit code, stderr and how long it ran.
func serveExit(t *testing.T, args ...string) (int, string, time.Duration) {
	t.Helper()
	cmd := subprocess(append([]string{"serve", "--data", t.TempDir()}, args...)...)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, stderr.String(), time.Since(start)
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("serve %v still runs after 20s: %s", args, stderr.String())
		return 0, "", 0
	}
}

// issue 36's first hour: with a port taken by something else, serve
// stops at once, naming the port and the flag that picks another (not
// a 30 s wait for "embedded server did not become ready").
func TestServePortTaken(t *testing.T) {
	nats := takenPort(t)
	code, stderr, took := serveExit(t, "--listen", freePort(t), "--nats-listen", nats)
	if code != 1 || !strings.Contains(stderr, nats) || !strings.Contains(stderr, "--nats-listen") ||
		strings.Contains(stderr, "did not become ready") {
		t.Errorf("NATS port taken: exit %d after %v, stderr:\n%s", code, took, stderr)
	}
	t.Logf("NATS port taken: exit after %v:\n%s", took, stderr)

	http := takenPort(t)
	code, stderr, took = serveExit(t, "--listen", http, "--nats-listen", freePort(t))
	if code != 1 || !strings.Contains(stderr, http) || !strings.Contains(stderr, "--listen") {
		t.Errorf("HTTP port taken: exit %d after %v, stderr:\n%s", code, took, stderr)
	}
	t.Logf("HTTP port taken: exit after %v", took)
}

// serve stops on SIGTERM (and SIGINT) while it is still starting: here
// against an external NATS that is not there, which it would otherwise
// retry for a long while.
func TestServeStopsOnSignalWhileStarting(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := subprocess("serve", "--data", t.TempDir(), "--listen", freePort(t), "--nats-url", "nats://"+freePort(t))
			cmd.Dir = t.TempDir()
			pr, pw := io.Pipe()
			cmd.Stderr = pw
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait(); pw.Close() }()
			var log strings.Builder
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "msg=starting") {
					break
				}
			}
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			time.Sleep(500 * time.Millisecond) // well into the start
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("exit after %v: %v\n%s", sig, err, log.String())
				}
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("still starting 15s after %v:\n%s", sig, log.String())
			}
		})
	}
}
