package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/countersign/countersign/internal/bench"
)

func init() {
	register("bench", "load and latency figures over real HTTP (grant, person, judge, hold)", runBench)
}

func runBench(args []string) int {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o bench.Options
	fl.StringVar(&o.Scenario, "scenario", "grant", "grant | person | judge | hold")
	fl.IntVar(&o.Concurrency, "concurrency", 64, "requests in flight")
	fl.DurationVar(&o.Duration, "duration", 10e9, "measured duration")
	fl.IntVar(&o.Polls, "polls", 10000, "hold: long-polls to hold")
	fl.StringVar(&o.URL, "url", "", "a running server (default: start one on loopback in a temp dir)")
	fl.StringVar(&o.Submitter, "token", "", "submitting agent's token (default dev-main)")
	fl.StringVar(&o.Decider, "decider-token", "", "the deciding person's token (default dev-person)")
	fl.StringVar(&o.Worker, "worker-token", "", "grant: the agent that is granted (default dev-programmer)")
	fl.StringVar(&o.Endorser, "endorser-token", "", "grant: that agent's parent (default dev-main)")
	fl.BoolVar(&o.Idempotency, "idempotency", false, "send an Idempotency-Key with every submit")
	asJSON := fl.Bool("json", false, "print the result as one JSON line")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	o.Exe, _ = os.Executable()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := bench.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	printBench(res, *asJSON)
	if res.Errors > 0 {
		return 1
	}
	return 0
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
	fmt.Printf("%s: c=%d  %d requests, %d errors  %.0f req/s  p50 %.2f ms  p99 %.2f ms\n",
		r.Scenario, r.Concurrency, r.Requests, r.Errors, r.ThroughputRPS, r.P50ms, r.P99ms)
	if r.FirstError != "" {
		fmt.Println("first error:", r.FirstError)
	}
}
