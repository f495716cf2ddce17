//go:build cluster

package cluster

import (
	"flag"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
)

var stallRuns = flag.Int("cluster.stall", 0, "runs of TestClusterWriteStallFigures (0: skipped); it logs how long writes and /readyz lag a killed leader")

// TestClusterWriteDuringElection: while clients submit without pause,
// the node leading the requests bucket is killed. Every submit sent
// before /readyz said 503 (those in flight at the kill among them) is
// answered before /readyz is 200 again, with 201 or 503 and Retry-After:
// none is held until its batch's own timeout while the cluster elects.
// Once /readyz is 200 again a submit is 201.
func TestClusterWriteDuringElection(t *testing.T) {
	c := startCluster(t)
	_, js := c.connect(t)
	api := startCountersign(t, c, "api-1", "api")
	cl := newClient(api.addr, "dev-main")
	node := c.node(t, streamLeaderOffMeta(t, c, js))
	type sent struct {
		from, to time.Time
		code     int
		retry    string
	}
	var mu sync.Mutex
	var all []sent
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				from := time.Now()
				code, retry := submitOnce(cl, w*1_000_000+i)
				mu.Lock()
				all = append(all, sent{from, time.Now(), code, retry})
				mu.Unlock()
			}
		}()
	}
	testutil.Eventually(t, 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(all) > 20 }, "the load running")
	node.Kill()
	url := "http://" + api.addr + "/readyz"
	var notReady, ready time.Time
	testutil.Eventually(t, 30*time.Second, func() bool {
		code, _ := getBody(url)
		notReady = time.Now()
		return code == http.StatusServiceUnavailable
	}, "/readyz 503 after the leader was killed")
	testutil.Eventually(t, 60*time.Second, func() bool {
		code, _ := getBody(url)
		ready = time.Now()
		return code == http.StatusOK
	}, "/readyz 200 once the buckets have leaders again")
	stop.Store(true)
	wg.Wait()
	for _, s := range all {
		if !s.from.Before(notReady) {
			continue
		}
		if s.code != http.StatusCreated && (s.code != http.StatusServiceUnavailable || s.retry == "") {
			t.Errorf("submit during the election: %d (Retry-After %q), want 201 or 503 with Retry-After", s.code, s.retry)
		}
		if !s.to.Before(ready) {
			t.Errorf("a submit sent before /readyz said 503 was answered (%d) only after it said 200 again", s.code)
		}
	}
	if code, _ := submitOnce(cl, -1); code != http.StatusCreated {
		t.Errorf("submit once ready: %d, want 201", code)
	}
	node.Start()
	node.WaitHealthy(t, 60*time.Second)
}

// submitOnce posts one call and returns the status and Retry-After.
func submitOnce(cl *client, i int) (int, string) {
	req, _ := http.NewRequest("POST", cl.url+"/v1/requests", strings.NewReader(fmt.Sprintf(
		`{"tool":"tools.call:send_payment","timeout":"1m","arguments":{"payment_id":%d}}`, i)))
	req.Header.Set("Authorization", "Bearer "+cl.token)
	resp, err := cl.http.Do(req)
	if err != nil {
		return 0, ""
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// TestClusterWriteStallFigures measures, over -cluster.stall runs, what
// clients under load see when the requests bucket's leader is killed:
// when /readyz first says 503 and when 200 again, the longest submit in
// flight after the kill and its status, and when a submit sent after the
// kill first gets through.
// Figures only (logged as medians); it asserts nothing about time.
func TestClusterWriteStallFigures(t *testing.T) {
	if *stallRuns == 0 {
		t.Skip("figures only: -cluster.stall N")
	}
	var notReady, readyAgain, first, through []time.Duration
	var codes []string
	for run := 0; run < *stallRuns; run++ {
		f := stallOnce(t)
		notReady, readyAgain, first, through = append(notReady, f.notReady), append(readyAgain, f.readyAgain), append(first, f.first), append(through, f.through)
		codes = append(codes, fmt.Sprint(f.code))
		t.Logf("run %d: /readyz 503 at %v, 200 at %v; longest submit %v (%d); first 201 sent after the kill at %v", run, f.notReady, f.readyAgain, f.first, f.code, f.through)
	}
	t.Logf("medians of %d: /readyz 503 at %v, 200 again at %v; longest submit %v (statuses %s); first 201 sent after the kill at %v",
		*stallRuns, median(notReady), median(readyAgain), median(first), strings.Join(codes, ","), median(through))
}

type stallFigures struct {
	notReady, readyAgain, first, through time.Duration
	code                                 int
}

// stallOnce kills the leader while 8 clients submit without pause, and
// measures from the kill.
func stallOnce(t *testing.T) (f stallFigures) {
	c := startCluster(t)
	_, js := c.connect(t)
	api := startCountersign(t, c, "api-1", "api")
	cl := newClient(api.addr, "dev-main")
	node := c.node(t, streamLeaderOffMeta(t, c, js))
	url := "http://" + api.addr + "/readyz"
	var mu sync.Mutex
	var start time.Time
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				t0 := time.Now()
				code, _ := submitOnce(cl, w*1_000_000+i)
				mu.Lock()
				if !start.IsZero() && time.Since(start) < time.Minute {
					if took := time.Since(t0); took > f.first {
						f.first, f.code = took, code // the longest submit in flight after the kill
					}
					if code == http.StatusCreated && t0.After(start) && f.through == 0 {
						f.through = t0.Sub(start)
					}
				}
				mu.Unlock()
				if code != http.StatusCreated {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(time.Second) // the load runs
	mu.Lock()
	start = time.Now()
	mu.Unlock()
	node.Kill()
	for time.Since(start) < time.Minute {
		code, _ := getBody(url)
		if code != http.StatusOK && f.notReady == 0 {
			f.notReady = time.Since(start)
		}
		if code == http.StatusOK && f.notReady != 0 {
			f.readyAgain = time.Since(start)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(12 * time.Second) // any write held by the lost leader returns
	stop.Store(true)
	wg.Wait()
	node.Start()
	node.WaitHealthy(t, 60*time.Second)
	return f
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(10 * time.Millisecond)
}
