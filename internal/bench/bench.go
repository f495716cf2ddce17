package bench

import (
	"context"
	"fmt"
	"time"
)

// Options select and size a run.
type Options struct {
	Scenario    string        // grant | person | hold | judge
	Concurrency int           // in-flight requests (default 64)
	Duration    time.Duration // measured time (default 10s)
	Polls       int           // hold: long-polls to hold (default 10000)
	// URL of a running server; empty starts one (in-process, or a child
	// process for hold) in a temporary directory.
	URL string
	// Tokens for a running server: an agent whose requests go to the
	// person (Submitter), that person (Decider), and an agent whose
	// requests go to Main (Worker, for grant). Defaults: the demo tokens.
	Submitter, Decider, Worker, Endorser string
	// Idempotency sends an Idempotency-Key with every submit.
	Idempotency bool
	// Exe is the countersign binary for hold's child server.
	Exe string
}

func (o *Options) setDefaults() {
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.Polls <= 0 {
		o.Polls = 10000
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.Submitter, "dev-main")
	def(&o.Decider, "dev-person")
	def(&o.Worker, "dev-programmer")
	def(&o.Endorser, "dev-main")
}

// Run runs one scenario.
func Run(ctx context.Context, o Options) (Result, error) {
	o.setDefaults()
	var res Result
	var err error
	switch o.Scenario {
	case "grant":
		res, err = withServer(ctx, o, nil, grantScenario)
	case "person":
		res, err = withServer(ctx, o, nil, personScenario)
	case "judge":
		res, err = judgeScenario(ctx, o)
	case "hold":
		res, err = holdScenario(ctx, o)
	default:
		return res, fmt.Errorf("bench: unknown scenario %q (grant, person, judge, hold)", o.Scenario)
	}
	res.Scenario, res.Concurrency = o.Scenario, o.Concurrency
	return res, err
}
