package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/bench"
	"github.com/countersign/countersign/internal/gcpace"
)

func runBench(args []string) int {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o bench.Options
	scenarios := fl.String("scenario", "grant", "grant | grant-bus | person | quorum | agent | judge | hold | fill, or several comma-separated (run one after another)")
	fl.IntVar(&o.Concurrency, "concurrency", 64, "requests in flight")
	fl.IntVar(&o.Workers, "workers", 1, "agent: runtimes of the reviewing agent, each on its own bus connection")
	fl.StringVar(&o.NATSURL, "nats-url", "", "grant-bus, agent: the running server's bus (with --url)")
	tenant := fl.String("tenant", "demo", "grant-bus, agent: the tenant of the tokens")
	fl.StringVar(&o.WorkerAgent, "worker-agent", "agt_programmer", "grant-bus, agent: the agent of --worker-token")
	fl.StringVar(&o.ReviewerAgent, "reviewer-agent", "agt_main", "agent: the agent of --endorser-token, the worker's parent")
	fl.DurationVar(&o.Duration, "duration", 10e9, "measured duration")
	fl.IntVar(&o.Polls, "polls", 10000, "hold: long-polls to hold")
	fl.IntVar(&o.Requests, "requests", 100000, "fill: requests to create (1,000 stay pending, the rest are decided)")
	fl.StringVar(&o.KeepData, "keep-data", "", "fill: fill this directory and leave it (its data/ and countersign.yaml serve again: countersign serve --config DIR/countersign.yaml --data DIR/data)")
	fl.StringVar(&o.URL, "url", "", "a running server (default: start one on loopback in a temp dir)")
	fl.StringVar(&o.Submitter, "token", "", "submitting agent's token (default dev-main)")
	fl.StringVar(&o.Decider, "decider-token", "", "the deciding person's token (default dev-person)")
	fl.StringVar(&o.Second, "second-token", "", "quorum: the second person's token (default bench-person-2)")
	fl.StringVar(&o.Worker, "worker-token", "", "grant: the agent that is granted (default dev-programmer)")
	fl.StringVar(&o.Endorser, "endorser-token", "", "grant: that agent's parent (default dev-main)")
	fl.BoolVar(&o.Idempotency, "idempotency", false, "send an Idempotency-Key with every submit")
	auditMode := fl.String("audit", "on", "the built-in server's audit log: on (its lag is reported), off, or both (each scenario off, then on)")
	asJSON := fl.Bool("json", false, "print the result as one JSON line")
	withFloor := fl.Bool("floor", false, "grant, person: run the floor (the smallest HTTP service doing the scenario's durable work, in this process) and countersign alternately, --rounds times, and print each figure, the medians and their ratio")
	rounds := fl.Int("rounds", 3, "with --floor: rounds of the floor and countersign, each round starting one further along")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the run to this file (the built-in server runs in this process; against --url, profile the server with serve --pprof)")
	memProfile := fl.String("memprofile", "", "write an allocation profile of the run to this file (as --cpuprofile, this process only)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *memProfile != "" {
		defer writeAllocProfile(*memProfile)
	}
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		defer stopProfile()
	}
	o.Exe, _ = os.Executable()
	o.Tenant = domain.TenantID(*tenant)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	code := 0
	modes, ok := map[string][]bool{"on": {false}, "off": {true}, "both": {true, false}}[*auditMode]
	if !ok {
		fmt.Fprintln(os.Stderr, "bench: --audit must be on, off or both")
		return 2
	}
	for _, sc := range strings.Split(*scenarios, ",") {
		o.Scenario = strings.TrimSpace(sc)
		if *withFloor {
			if o.URL != "" || *rounds < 1 {
				fmt.Fprintln(os.Stderr, "bench: --floor runs both in this process (no --url), with --rounds of 1 or more")
				return 2
			}
			c, err := benchAgainstFloor(ctx, o, modes, *rounds, *asJSON)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				return 1
			}
			code = max(code, c)
			continue
		}
		for i, off := range modes {
			if i > 0 {
				bench.Settle()
			}
			o.NoAudit = off
			res, err := runCountersign(ctx, o)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				return 1
			}
			printBench(res, *asJSON)
			if res.Errors > 0 {
				code = 1
			}
		}
	}
	return code
}

// benchAgainstFloor runs o's scenario on the floor and on countersign
// (each audit mode in modes), rounds times, printing each run; then the
// medians of the throughputs and of the CPU per request (the process's,
// load included: steadier than throughput on a shared machine) and
// their ratios to the floor's.
//
// Each round starts one further along the runs (floor, then the modes):
// a run right after another pays for some of its cleanup (its files
// written back and freed, its garbage collected), so no system keeps
// one place in every round. Settle before each run takes most of that
// away.
func benchAgainstFloor(ctx context.Context, o bench.Options, modes []bool, rounds int, asJSON bool) (int, error) {
	code := 0
	var floor, floorCPU []float64
	mine, mineCPU := make([][]float64, len(modes)), make([][]float64, len(modes))
	for r := range rounds {
		for _, k := range roundOrder(r, len(modes)+1) { // 0 the floor, else modes[k-1]
			bench.Settle()
			if k == 0 {
				f := o
				f.Floor = true
				res, err := bench.Run(ctx, f)
				if err != nil {
					return 1, err
				}
				printBench(res, asJSON)
				floor, floorCPU = append(floor, res.ThroughputRPS), append(floorCPU, res.CPUPerRequestMs)
				continue
			}
			o.NoAudit = modes[k-1]
			res, err := runCountersign(ctx, o)
			if err != nil {
				return 1, err
			}
			printBench(res, asJSON)
			mine[k-1], mineCPU[k-1] = append(mine[k-1], res.ThroughputRPS), append(mineCPU[k-1], res.CPUPerRequestMs)
			if res.Errors > 0 {
				code = 1
			}
		}
	}
	fm, fc := median(floor), median(floorCPU)
	for i, off := range modes {
		audit := "on"
		if off {
			audit = "off"
		}
		m, c := median(mine[i]), median(mineCPU[i])
		each := perRound(mine[i], floor)
		if asJSON {
			b, _ := json.Marshal(map[string]any{"scenario": o.Scenario, "audit": audit, "rounds": rounds,
				"floor_rps": fm, "throughput_rps": m, "ratio": m / fm, "round_ratios": each,
				"floor_cpu_per_request_ms": fc, "cpu_per_request_ms": c, "cpu_ratio": fc / c})
			fmt.Println(string(b))
			continue
		}
		fmt.Printf("%s: medians of %d rounds: countersign (audit %s) %.0f req/s, floor %.0f req/s: %.2f of the floor (rounds %s); cpu %.3f ms/req, floor %.3f: %.2f\n",
			o.Scenario, rounds, audit, m, fm, m/fm, ratios(each), c, fc, fc/c)
	}
	if len(modes) == 2 {
		tput, cpu := median(mine[1])/median(mine[0]), median(mineCPU[0])/median(mineCPU[1])
		each := perRound(mine[1], mine[0])
		if asJSON {
			b, _ := json.Marshal(map[string]any{"scenario": o.Scenario, "rounds": rounds, "audit_on_off_throughput": tput, "audit_on_off_cpu": cpu,
				"audit_on_off_rounds": each})
			fmt.Println(string(b))
		} else {
			fmt.Printf("%s: audit on/off, medians: throughput %.2f (rounds %s), cpu per request %.2f\n", o.Scenario, tput, ratios(each), cpu)
		}
	}
	return code, nil
}

// roundOrder is the order of n runs in round r: each round starts one
// further along, so over n rounds each run holds each place once.
func roundOrder(r, n int) []int {
	order := make([]int, n)
	for j := range order {
		order[j] = (r + j) % n
	}
	return order
}

// runCountersign runs o against countersign with the collector paced as
// countersign serve paces it (gcHeadroom): the built-in server runs in
// this process. The floor runs at Go's defaults, as a service written
// without such care would.
func runCountersign(ctx context.Context, o bench.Options) (bench.Result, error) {
	stop := gcpace.Start(gcHeadroom, 250*time.Millisecond)
	defer stop()
	return bench.Run(ctx, o)
}

// median is the median of xs (not empty); xs is sorted in place.
func median(xs []float64) float64 {
	xs = slices.Sorted(slices.Values(xs)) // a copy: the rounds keep their order for perRound
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// perRound is a[r]/b[r] for each round r: whether the rounds agree on a
// ratio says more than its median does on a noisy machine.
func perRound(a, b []float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for r := range out {
		out[r] = a[r] / b[r]
	}
	return out
}

// ratios prints rs as "0.62 0.58 0.66".
func ratios(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.FormatFloat(r, 'f', 2, 64)
	}
	return strings.Join(parts, " ")
}

// startCPUProfile profiles this process into file until the returned
// func is called.
func startCPUProfile(file string) (func(), error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeAllocProfile writes the allocations made since the start to file.
func writeAllocProfile(file string) {
	f, err := os.Create(file)
	if err == nil {
		err = errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
}

func printBench(r bench.Result, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
		return
	}
	if r.Scenario == "hold" {
		fmt.Printf("hold: %d long-polls held; server memory %.1f KiB per held poll\n", r.Requests, r.BytesPerPoll/1024)
		return
	}
	if r.Scenario == "fill" {
		fmt.Printf("fill: %d requests (%d pending) created at %.0f req/s; server RSS %.0f MiB filled, %.0f MiB after a restart, peak %.0f MiB (starts and stops included); restart to /readyz %.2f s; GET /v1/requests p50 %.2f ms p99 %.2f ms\n",
			r.Requests, 1000, r.ThroughputRPS, r.FilledRSS/(1<<20), r.RSSBytes/(1<<20), r.PeakRSS/(1<<20), r.ReadyMs/1000, r.P50ms, r.P99ms)
		return
	}
	workers := ""
	if r.Workers > 0 {
		workers = fmt.Sprintf(" workers=%d", r.Workers)
	}
	cpu := ""
	if r.CPUPerRequestMs > 0 {
		cpu = fmt.Sprintf("  cpu %.2f ms/req", r.CPUPerRequestMs)
	}
	fmt.Printf("%s: c=%d%s cores=%d  %d requests, %d errors  %.0f req/s  p50 %.2f ms  p99 %.2f ms%s%s\n",
		r.Scenario, r.Concurrency, workers, r.Cores, r.Requests, r.Errors, r.ThroughputRPS, r.P50ms, r.P99ms, cpu, auditFigures(r))
	if r.FirstError != "" {
		fmt.Println("first error:", r.FirstError)
	}
}

// auditFigures describes the audit log of a run on the built-in server.
func auditFigures(r bench.Result) string {
	switch {
	case r.Audit == "on":
		return fmt.Sprintf("  audit on: %d entries, lag p50 %.2f ms p99 %.2f ms", r.AuditEntries, r.AuditLagP50ms, r.AuditLagP99ms)
	case r.Audit == "off":
		return "  audit off"
	case r.Floor != "":
		return "  floor: " + r.Floor
	}
	return ""
}
