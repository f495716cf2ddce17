package testutil

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildNATSServer builds the nats-server of the version in go.mod into dir
// and returns the binary's path. The go build cache makes a repeat quick.
func BuildNATSServer(dir string) (string, error) {
	return GoBuild(dir, "nats-server", "github.com/nats-io/nats-server/v2")
}

// GoBuild builds the main package pkg (an import path of this module or of
// one it requires) to dir/name.
func GoBuild(dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// FreeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment
// ago, for a child process that must keep its port across restarts.
//
// The port is drawn at random below the kernel's ephemeral range and
// checked by listening on it: a port the kernel handed out for port 0
// goes back to that range once closed, where any test running beside
// this one may get it as the source port of a connection before the child
// binds it (a CI run lost a cluster node to "address already in use" that
// way). Ports are never handed out twice by one test binary. Where the
// range is unknown, or nothing below it is free, it falls back to port 0.
func FreeLoopbackPort(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 200 {
		if low <= minDrawn+1 {
			break
		}
		p := minDrawn + rand.IntN(low-minDrawn)
		if portsGiven[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		ln.Close()
		portsGiven[p] = true
		return p
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testutil: free port: %v", err)
	}
	defer ln.Close()
	p := ln.Addr().(*net.TCPAddr).Port
	portsGiven[p] = true
	return p
}

// minDrawn is the lowest port FreeLoopbackPort draws.
const minDrawn = 20000

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ephemeralLow is the first port of the kernel's ephemeral range (Linux),
// or 0 where it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	var low, high int
	if n, _ := fmt.Sscan(string(b), &low, &high); n != 2 {
		return 0
	}
	return low
}

// Process is a program run as a separate OS process, which a test can kill
// with SIGKILL and start again with the same arguments (so on the same
// ports and the same store). Its output is appended to LogPath across
// restarts, and the log's tail is printed if the test fails.
type Process struct {
	Name    string
	Bin     string
	Args    []string
	Env     []string // added to the test's environment
	Dir     string   // working directory; default the test's
	LogPath string
	// Ready reports whether a started process is ready; nil: at once.
	Ready func() bool

	t      testing.TB
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartProcess starts p, waits for p.Ready (up to 60s) and registers a
// cleanup that kills it.
func StartProcess(t testing.TB, p *Process) *Process {
	t.Helper()
	p.t = t
	if p.LogPath == "" {
		p.LogPath = filepath.Join(t.TempDir(), p.Name+".log")
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("last lines of %s's log:\n%s", p.Name, tail(p.LogPath, 40))
		}
	})
	p.Start()
	return p
}

// Start runs the process again (after Kill) and waits until it is ready.
func (p *Process) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		p.t.Fatalf("testutil: %s is already running", p.Name)
	}
	log, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatalf("testutil: %s log: %v", p.Name, err)
	}
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = p.Dir, log, log
	cmd.Env = append(os.Environ(), p.Env...)
	if err := cmd.Start(); err != nil {
		log.Close()
		p.t.Fatalf("testutil: start %s: %v", p.Name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	if p.Ready == nil {
		return
	}
	deadline := time.Now().Add(60 * time.Second)
	for !p.Ready() {
		select {
		case <-exited:
			p.t.Fatalf("testutil: %s exited before it was ready:\n%s", p.Name, tail(p.LogPath, 40))
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("testutil: %s not ready within 60s:\n%s", p.Name, tail(p.LogPath, 40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill sends SIGKILL (kill -9: no shutdown code runs) and waits for the
// process to be gone. Killing a stopped process does nothing.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	p.cmd = nil
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// NATSProcess is a nats-server run as its own OS process from a config
// file, with its client port and monitoring port on loopback. Kill is
// kill -9; Start brings it back on the same ports and store.
type NATSProcess struct {
	*Process
	ClientPort, HTTPPort int
}

// StartNATSProcess runs bin (see BuildNATSServer) with config file conf,
// whose client listener is 127.0.0.1:clientPort and monitoring listener
// 127.0.0.1:httpPort; env is added to its environment (for variables the
// config references). It returns once the client port accepts
// connections; a cluster node is healthy only once enough of its peers run
// (see WaitHealthy).
func StartNATSProcess(t testing.TB, name, bin, conf string, clientPort, httpPort int, env ...string) *NATSProcess {
	t.Helper()
	n := &NATSProcess{ClientPort: clientPort, HTTPPort: httpPort}
	n.Process = &Process{Name: name, Bin: bin, Args: []string{"-c", conf}, Env: env, Ready: n.listening}
	StartProcess(t, n.Process)
	return n
}

// WaitHealthy waits until /healthz answers 200: for a JetStream cluster
// node, once it has a meta leader and its streams have caught up.
func (n *NATSProcess) WaitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, n.Healthy, n.Name+" healthy")
}

func (n *NATSProcess) listening() bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", n.ClientPort), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// URL is the client URL, with user and password if given.
func (n *NATSProcess) URL(user, password string) string {
	if user == "" {
		return fmt.Sprintf("nats://127.0.0.1:%d", n.ClientPort)
	}
	return fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", user, password, n.ClientPort)
}

// MonitorURL is the monitoring endpoint's base URL.
func (n *NATSProcess) MonitorURL() string { return fmt.Sprintf("http://127.0.0.1:%d", n.HTTPPort) }

// Healthy reports whether /healthz answers 200.
func (n *NATSProcess) Healthy() bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(n.MonitorURL() + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
