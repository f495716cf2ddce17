package bench

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Result is one scenario's outcome; its JSON is the --json line.
type Result struct {
	Scenario      string  `json:"scenario"`
	Concurrency   int     `json:"concurrency"`
	Workers       int     `json:"workers,omitempty"` // agent: runtimes
	Cores         int     `json:"cores"`
	Requests      int64   `json:"requests"`
	Errors        int64   `json:"errors"`
	ThroughputRPS float64 `json:"throughput_rps"`
	P50ms         float64 `json:"p50_ms"`
	P99ms         float64 `json:"p99_ms"`
	// BytesPerPoll is the server's memory per held long-poll (hold only).
	BytesPerPoll float64 `json:"bytes_per_poll,omitempty"`
	FirstError   string  `json:"first_error,omitempty"`
	// Fill only: the server's resident memory once filled (FilledRSS) and
	// after a restart on the same data (RSSBytes), and the time from that
	// restart to /readyz (ReadyMs). P50ms and P99ms time list pages.
	// PeakRSS is the highest resident memory either server process
	// reached, start and stop included (0 where the system does not say).
	FilledRSS float64 `json:"filled_rss_bytes,omitempty"`
	RSSBytes  float64 `json:"rss_bytes,omitempty"`
	ReadyMs   float64 `json:"ready_ms,omitempty"`
	PeakRSS   float64 `json:"peak_rss_bytes,omitempty"`
	// Audit is "on" or "off" for an in-process server; with it on, the
	// lag from each event to its audit entry (the entry's stored time
	// less the event's time) over AuditEntries entries.
	Audit         string  `json:"audit,omitempty"`
	AuditEntries  int     `json:"audit_entries,omitempty"`
	AuditLagP50ms float64 `json:"audit_lag_p50_ms,omitempty"`
	AuditLagP99ms float64 `json:"audit_lag_p99_ms,omitempty"`
	// Floor, set on a run of the floor (Options.Floor), names its work.
	Floor string `json:"floor,omitempty"`
	// CPUPerRequestMs is this process's CPU time (user and system) over
	// the measured duration per request: with the in-process server, the
	// server's and the load's together.
	CPUPerRequestMs float64 `json:"cpu_per_request_ms,omitempty"`
}

// maxOps bounds a run whatever its duration.
const maxOps = 5_000_000

// run calls op from conc workers until d passes (or maxOps), timing each.
func run(ctx context.Context, conc int, d time.Duration, op func(ctx context.Context, w int) error) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var ops, errs atomic.Int64
	var firstErr atomic.Value
	lats := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	start, cpu0 := time.Now(), cpuTime()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && ops.Add(1) <= maxOps {
				t0 := time.Now()
				if err := op(ctx, w); err != nil {
					if ctx.Err() != nil {
						ops.Add(-1)
						return
					}
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
			ops.Add(-1)
		}()
	}
	wg.Wait()
	r := summarize(lats, errs.Load(), time.Since(start), firstErr.Load())
	if cpu := cpuTime() - cpu0; cpu > 0 && r.Requests > 0 {
		r.CPUPerRequestMs = ms(cpu / time.Duration(r.Requests))
	}
	return r
}

func summarize(per [][]time.Duration, errs int64, elapsed time.Duration, firstErr any) Result {
	var all []time.Duration
	for _, l := range per {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	r := Result{Requests: int64(len(all)), Errors: errs, ThroughputRPS: float64(len(all)) / elapsed.Seconds()}
	if len(all) > 0 {
		r.P50ms = ms(all[len(all)/2])
		r.P99ms = ms(all[min(len(all)-1, len(all)*99/100)])
	}
	if s, ok := firstErr.(string); ok {
		r.FirstError = s
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuTime is the CPU time this process has used, 0 where the system does
// not say.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
