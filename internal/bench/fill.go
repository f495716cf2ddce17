package bench

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/config"
)

// fillPending is how many of a fill's requests stay pending.
const fillPending = 1000

// fillAdmin is the admin token the fill's server is given, to list the
// whole tenant.
const fillAdmin = "bench-admin"

// listSamples is how many GET /v1/requests pages a fill times.
const listSamples = 2000

// fillScenario creates o.Requests requests through the API as fast as it
// can (all but fillPending decided in their 201 by a lifetime grant, the
// rest left pending on the person), on a server it runs as a child
// process (`countersign serve`, in a temporary directory), and measures
// that process: its resident memory once filled, the time from a restart
// on the same data to /readyz, its resident memory after that restart,
// the peak resident memory of either process (through its start and its
// stop, which saves the mirror's snapshot),
// and the p50/p99 of GET /v1/requests pages (an admin's pages of the whole
// tenant from random cursors, the admin's pending ones, the person's
// inbox) on the restarted server.
func fillScenario(ctx context.Context, o Options) (Result, error) {
	if o.Exe == "" {
		return Result{}, errors.New("bench: fill needs the countersign binary")
	}
	if o.Requests < fillPending+1 {
		return Result{}, fmt.Errorf("bench: fill needs --requests above %d", fillPending)
	}
	dir := o.KeepData
	if dir == "" {
		tmp, err := os.MkdirTemp("", "countersign-fill-")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return Result{}, err
	}
	cfgFile := filepath.Join(dir, "countersign.yaml")
	yaml := unthrottled(config.DemoYAML) + "      - {token: " + fillAdmin + ", principal: \"person:u-1\", scopes: [admin, approvals:read]}\n"
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
		return Result{}, err
	}
	srv, err := startChild(ctx, o.Exe, dir, cfgFile)
	if err != nil {
		return Result{}, err
	}
	defer func() { srv.stop() }()
	o.URL = srv.url
	cl := newHTTPClient(o.Concurrency + 8)
	if err := makeGrant(ctx, o, cl); err != nil {
		return Result{}, fmt.Errorf("bench: setting up the grant: %w", err)
	}
	start := time.Now()
	ids, err := fill(ctx, o, cl)
	if err != nil {
		return Result{}, err
	}
	res := Result{Requests: int64(len(ids)), ThroughputRPS: float64(len(ids)) / time.Since(start).Seconds()}
	if res.FilledRSS, err = settledRSS(ctx, srv.url); err != nil {
		return res, err
	}
	srv.stop()
	res.PeakRSS = srv.maxRSS
	t0 := time.Now()
	again, err := startChild(ctx, o.Exe, dir, cfgFile)
	if err != nil {
		return res, err
	}
	srv = again
	res.ReadyMs = ms(time.Since(t0))
	o.URL = srv.url
	if res.RSSBytes, err = settledRSS(ctx, srv.url); err != nil {
		return res, err
	}
	lats, err := timeLists(ctx, o, cl, ids)
	if err != nil {
		return res, err
	}
	sum := summarize([][]time.Duration{lats}, 0, time.Second, nil)
	res.P50ms, res.P99ms = sum.P50ms, sum.P99ms
	srv.stop()
	res.PeakRSS = max(res.PeakRSS, srv.maxRSS)
	return res, nil
}

// fill creates the requests and returns their ids, oldest first.
func fill(ctx context.Context, o Options, cl *http.Client) ([]string, error) {
	worker := &client{url: o.URL, token: o.Worker, http: cl}
	submitter := &client{url: o.URL, token: o.Submitter, http: cl}
	ids := make([]string, o.Requests)
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < o.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= o.Requests || ctx.Err() != nil {
					return
				}
				c, tool, want := worker, benchTool, "approved"
				if i >= o.Requests-fillPending {
					c, tool, want = submitter, "bench_fill", "pending"
				}
				body := mustJSON(map[string]any{"tool": tool, "arguments": map[string]any{"n": i, "amount": 4900, "currency": "GBP"}})
				r, err := c.call(ctx, "POST", "/v1/requests", body, http.StatusCreated)
				if err == nil && r.Status != want {
					err = fmt.Errorf("bench: fill request %s is %s, not %s", r.ID, r.Status, want)
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					next.Store(int64(o.Requests))
					return
				}
				ids[i] = r.ID
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	sort.Strings(ids) // concurrent creates finish out of order
	return ids, ctx.Err()
}

// timeLists times listSamples pages: an admin's pages of the whole tenant
// from random cursors, the admin's pending requests, and the person's
// inbox.
func timeLists(ctx context.Context, o Options, cl *http.Client, ids []string) ([]time.Duration, error) {
	admin := &client{url: o.URL, token: fillAdmin, http: cl}
	person := &client{url: o.URL, token: o.Decider, http: cl}
	lats := make([]time.Duration, 0, listSamples)
	for i := 0; i < listSamples; i++ {
		c, path := admin, "/v1/requests?limit=50"
		switch i % 4 {
		case 0, 1:
			path += "&cursor=" + base64.RawURLEncoding.EncodeToString([]byte(ids[rand.IntN(len(ids))]))
		case 2:
			path += "&status=pending"
		case 3:
			c = person
		}
		t0 := time.Now()
		if err := c.list(ctx, path); err != nil {
			return nil, err
		}
		lats = append(lats, time.Since(t0))
	}
	return lats, nil
}

// child is a `countersign serve` process.
type child struct {
	url    string
	cmd    *exec.Cmd
	done   bool
	maxRSS float64 // its peak resident memory, once stopped (0: not known)
	dir    string  // removed once stopped, when set
}

// startChild starts `exe serve` on dir's data with cfgFile on a free
// loopback port and returns once /readyz answers 200.
func startChild(ctx context.Context, exe, dir, cfgFile string) (*child, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, exe, "serve", "--config", cfgFile, "--data", filepath.Join(dir, "data"), "--listen", addr, "--nats-listen", "off")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{url: "http://" + addr, cmd: cmd}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if resp, err := http.Get(c.url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c, nil
			}
		}
	}
	c.stop()
	return nil, errors.New("bench: child server did not become ready")
}

// stop interrupts the process and waits for it to exit.
func (c *child) stop() {
	if c.done {
		return
	}
	c.done = true
	_ = c.cmd.Process.Signal(os.Interrupt)
	_ = c.cmd.Wait()
	if c.cmd.ProcessState != nil {
		c.maxRSS = maxRSS(c.cmd.ProcessState)
	}
	if c.dir != "" {
		os.RemoveAll(c.dir)
	}
}
