package main

// countersign rpc: a line client of the live approver protocol (GET
// /v1/rpc, SPEC §8), so that docs/integrators/live-protocol.md runs with what the
// repository ships. Each line on stdin is one JSON-RPC message sent as
// it is (a leading "> " is dropped, so that the doc's lines can be
// pasted; blank lines and lines starting with # are skipped); each
// message the server sends is printed on its own line on stdout. When
// stdin ends, it waits for the answers to the calls it sent and what the
// server sends for --linger more (the notifications that follow an
// answer), then closes the connection.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

const rpcUsage = "rpc [--url U] [--token T] [--linger D]"

func runRPC(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, configDir: os.UserConfigDir}
	return rpcClient(ctx, args, os.Stdin, env)
}

func rpcClient(ctx context.Context, args []string, stdin io.Reader, env cliEnv) int {
	fs := flag.NewFlagSet("rpc", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	o := &cliOpts{}
	cliCommonFlags(fs, o, env.getenv)
	linger := fs.Duration("linger", time.Second, "after stdin ends and every call is answered, keep printing what the server sends this long")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if errors.Is(err, flag.ErrHelp) {
			return cliExitOK
		}
		fmt.Fprintln(env.stderr, "usage: countersign "+rpcUsage)
		return cliExitUsage
	}
	if o.token == "" {
		o.token = env.getenv("COUNTERSIGN_TOKEN")
	}
	if o.token == "" {
		o.token = storedToken(env, o.url)
	}
	wsURL, err := rpcURL(o.url)
	if err == nil && o.token == "" {
		err = errors.New("no token: pass --token, set COUNTERSIGN_TOKEN or run countersign login")
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "countersign rpc: %v\n", err)
		return cliExitUsage
	}
	c, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + o.token}}})
	if err != nil {
		if resp != nil {
			fmt.Fprintf(env.stderr, "countersign rpc: %s refused the connection: %s\n", wsURL, resp.Status)
		} else {
			fmt.Fprintf(env.stderr, "countersign rpc: cannot reach countersign at %s: %v\n", wsURL, err)
		}
		return cliExitRefused
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	s := &rpcSession{c: c, out: env.stdout, calls: map[string]bool{}, idle: make(chan struct{}, 1)}
	readErr := make(chan error, 1)
	go func() { readErr <- s.read(ctx) }()
	sent := make(chan error, 1)
	go func() { sent <- s.send(ctx, stdin, env.stderr) }()
	var end <-chan time.Time // after stdin and the answers: the linger
	for {
		select {
		case err := <-readErr:
			return rpcEnd(env, err)
		case err := <-sent:
			if err != nil {
				fmt.Fprintf(env.stderr, "countersign rpc: %v\n", err)
				return cliExitRefused
			}
			sent = nil // stdin ended: wait for the answers
			s.checkIdle()
		case <-s.idle:
			if sent == nil && end == nil {
				end = time.After(*linger)
			}
		case <-end:
			_ = c.Close(websocket.StatusNormalClosure, "")
			return cliExitOK
		case <-ctx.Done():
			_ = c.Close(websocket.StatusNormalClosure, "")
			return cliExitOK
		}
	}
}

// rpcURL is the WebSocket URL of /v1/rpc on the server at base.
func rpcURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--url %q is not an http(s) URL", base)
	}
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	u.Path = strings.TrimRight(u.Path, "/") + "/v1/rpc"
	return u.String(), nil
}

func rpcEnd(env cliEnv, err error) int {
	if s := websocket.CloseStatus(err); s == websocket.StatusNormalClosure {
		return cliExitOK
	} else if s != -1 {
		fmt.Fprintf(env.stderr, "countersign rpc: the server closed the connection: %d %v\n", s, err)
		return cliExitRefused
	}
	fmt.Fprintf(env.stderr, "countersign rpc: %v\n", err)
	return cliExitRefused
}

// rpcSession is one connection: what it prints, and the calls sent that
// have no response yet.
type rpcSession struct {
	c     *websocket.Conn
	out   io.Writer
	mu    sync.Mutex
	calls map[string]bool // ids of the calls sent, unanswered
	idle  chan struct{}   // a signal: no call is unanswered
}

// rpcMessage is what the client reads of a message to match calls and
// responses.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (s *rpcSession) read(ctx context.Context) error {
	for {
		_, data, err := s.c.Read(ctx)
		if err != nil {
			return err
		}
		s.mu.Lock()
		fmt.Fprintf(s.out, "%s\n", data)
		var m rpcMessage
		if json.Unmarshal(data, &m) == nil && m.Method == "" && len(m.ID) > 0 {
			delete(s.calls, string(m.ID))
		}
		s.mu.Unlock()
		s.checkIdle()
	}
}

func (s *rpcSession) checkIdle() {
	s.mu.Lock()
	n := len(s.calls)
	s.mu.Unlock()
	if n == 0 {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
}

// send sends each line of stdin; a line that is not one JSON object is
// refused (said on stderr) and not sent.
func (s *rpcSession) send(ctx context.Context, stdin io.Reader, stderr io.Writer) error {
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		line = strings.TrimSpace(strings.TrimPrefix(line, ">"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var m rpcMessage
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &obj) != nil || json.Unmarshal([]byte(line), &m) != nil {
			fmt.Fprintf(stderr, "countersign rpc: line %d is not one JSON object; not sent\n", n)
			continue
		}
		if m.Method != "" && len(m.ID) > 0 {
			s.mu.Lock()
			s.calls[string(m.ID)] = true
			s.mu.Unlock()
		}
		if err := s.c.Write(ctx, websocket.MessageText, []byte(line)); err != nil {
			return fmt.Errorf("sending line %d: %w", n, err)
		}
	}
	return sc.Err()
}
