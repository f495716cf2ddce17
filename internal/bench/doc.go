// Package bench drives a countersign server over real HTTP and reports
// throughput and latency percentiles: the grant scenario (every submit is
// decided by a grant in its 201), the person scenario (submit, a concurrent
// decider answers, the submitter's long-poll returns), the judge scenario
// (a scripted chat-completions model decides by rule, so the figure is the
// judge's own overhead), and the hold scenario (many concurrent long-polls,
// measuring the server's memory per held poll). Loops are bounded in time
// and count, and target loopback only.
package bench
