package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/countersign/countersign/domain"
)

// Options select and size a run.
type Options struct {
	Scenario    string        // grant | grant-bus | person | quorum | agent | hold | judge | fill
	Concurrency int           // in-flight requests (default 64)
	Workers     int           // agent: runtimes of the reviewing agent (default 1)
	Duration    time.Duration // measured time (default 10s)
	Polls       int           // hold: long-polls to hold (default 10000)
	Requests    int           // fill: requests to create (default 100000)
	KeepData    string        // fill: the directory to fill and leave in place (default a temporary one, removed)
	// URL of a running server; empty starts one (in-process, or a child
	// process for hold) in a temporary directory.
	URL string
	// Tokens for a running server: an agent whose requests go to the
	// person (Submitter), that person (Decider), and an agent whose
	// requests go to Main (Worker, for grant). Defaults: the demo tokens.
	Submitter, Decider, Worker, Endorser string
	// Second is quorum's second person (default bench-person-2): a
	// running server needs the group and policy of quorumYAML.
	Second string
	// Idempotency sends an Idempotency-Key with every submit.
	Idempotency bool
	// NoAudit runs the in-process server without its audit writer; with
	// it on (the default) a run also reports the audit log's lag.
	NoAudit bool
	// Exe is the countersign binary for hold's child server.
	Exe string
	// NATSURL of a running server's bus (grant-bus, agent); with URL empty,
	// the in-process server's client port. Tenant, WorkerAgent and
	// ReviewerAgent name the tenant and the principals of Worker and
	// Endorser there (their inbox prefixes): default demo, agt_programmer,
	// agt_main.
	NATSURL                    string
	Tenant                     domain.TenantID
	WorkerAgent, ReviewerAgent string
	// Floor runs the scenario (grant or person) against the floor instead
	// of countersign: the smallest HTTP service doing the scenario's
	// durable work, in-process (floor.go).
	Floor bool
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
	if o.Requests <= 0 {
		o.Requests = 100_000
	}
	if o.Workers <= 0 {
		o.Workers = 1
	}
	if o.Tenant == "" {
		o.Tenant = "demo"
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.Submitter, "dev-main")
	def(&o.Decider, "dev-person")
	def(&o.Second, quorumSecond)
	def(&o.Worker, "dev-programmer")
	def(&o.Endorser, "dev-main")
	def(&o.WorkerAgent, "agt_programmer")
	def(&o.ReviewerAgent, "agt_main")
}

// Run runs one scenario.
func Run(ctx context.Context, o Options) (Result, error) {
	o.setDefaults()
	var res Result
	var err error
	switch {
	case o.Floor:
		res, err = runFloor(ctx, o)
		res.Scenario, res.Concurrency, res.Cores, res.Floor = o.Scenario, o.Concurrency, runtime.NumCPU(), floorNote(o.Scenario)
		return res, err
	}
	switch o.Scenario {
	case "grant":
		res, err = withServer(ctx, o, nil, grantScenario)
	case "grant-bus":
		res, err = withServer(ctx, o, nil, grantBusScenario)
	case "person":
		res, err = withServer(ctx, o, nil, personScenario)
	case "quorum":
		res, err = withQuorumServer(ctx, o)
	case "agent":
		res, err = withServer(ctx, o, nil, agentScenario)
	case "judge":
		res, err = judgeScenario(ctx, o)
	case "hold":
		res, err = holdScenario(ctx, o)
	case "fill":
		res, err = fillScenario(ctx, o)
	default:
		return res, fmt.Errorf("bench: unknown scenario %q (grant, grant-bus, person, quorum, agent, judge, hold, fill)", o.Scenario)
	}
	res.Scenario, res.Concurrency, res.Cores = o.Scenario, o.Concurrency, runtime.NumCPU()
	if o.Scenario == "agent" {
		res.Workers = o.Workers
	}
	return res, err
}
