package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/countersign/countersign/config"
)

// holdScenario holds o.Polls long-polls on pending requests and reports the
// server's resident memory per held poll. The server runs in its own
// process (started here unless o.URL is set), so the clients' memory and
// file descriptors are not counted.
func holdScenario(ctx context.Context, o Options) (Result, error) {
	if o.URL == "" {
		srv, err := spawn(ctx, o.Exe)
		if err != nil {
			return Result{}, err
		}
		defer srv.stop()
		o.URL = srv.url
	}
	cl := newHTTPClient(o.Polls + 64)
	submitter := &client{url: o.URL, token: o.Submitter, http: cl}
	ids, err := createPending(ctx, submitter, o.Polls)
	if err != nil {
		return Result{}, err
	}
	before, err := settledRSS(ctx, o.URL)
	if err != nil {
		return Result{}, err
	}
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = submitter.call(pctx, "GET", "/v1/requests/"+id+"?wait=60s", nil, http.StatusOK)
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	if err := waitHeld(ctx, o.URL, o.Polls); err != nil {
		return Result{}, err
	}
	after, err := settledRSS(ctx, o.URL)
	if err != nil {
		return Result{}, err
	}
	return Result{Requests: int64(o.Polls), BytesPerPoll: (after - before) / float64(o.Polls)}, nil
}

func createPending(ctx context.Context, c *client, n int) ([]string, error) {
	ids := make([]string, n)
	errs := make(chan error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				body := mustJSON(map[string]any{"tool": "bench_hold", "arguments": map[string]any{"n": i}, "timeout": "10m"})
				rec, err := c.call(ctx, "POST", "/v1/requests", body, http.StatusCreated)
				if err != nil {
					errs <- err
				}
				ids[i] = rec.ID
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return ids, <-errs
}

// settledRSS reads the server's resident memory once it stops moving.
func settledRSS(ctx context.Context, url string) (float64, error) {
	prev := -1.0
	for i := 0; i < 20; i++ {
		v, err := metric(ctx, url, "process_resident_memory_bytes")
		if err != nil {
			return 0, err
		}
		if prev > 0 && v-prev < 256<<10 && prev-v < 256<<10 {
			return v, nil
		}
		prev = v
		time.Sleep(500 * time.Millisecond)
	}
	return prev, nil
}

func waitHeld(ctx context.Context, url string, n int) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		v, err := metric(ctx, url, "countersign_longpolls_waiting")
		if err == nil && int(v) >= n {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("bench: %d long-polls were not all held within 60s", n)
}

// spawn starts `exe serve` on the demo config, its submit limits lifted
// (the scenario creates its pending requests as fast as it can), in a
// temporary directory that its stop removes.
func spawn(ctx context.Context, exe string) (*child, error) {
	if exe == "" {
		return nil, errors.New("bench: hold needs the countersign binary or --url")
	}
	dir, err := os.MkdirTemp("", "countersign-hold-")
	if err != nil {
		return nil, err
	}
	cfgFile := filepath.Join(dir, "countersign.yaml")
	if err := os.WriteFile(cfgFile, []byte(unthrottled(config.DemoYAML)), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	srv, err := startChild(ctx, exe, dir, cfgFile)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	srv.dir = dir
	return srv, nil
}
