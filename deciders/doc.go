// Package deciders owns who decides a request: the check order of SPEC §2
// (member policy, reads and own subagents, grants, rules through the judge,
// then the chain), what "holds a capability" means for an agent or a
// person (SPEC §3), who the next decider up the chain is, and the workers
// that act on time and on work subjects: the timer worker that expires
// requests at their deadline and passes an agent's review up after its
// review_timeout, the worker that consumes decider work subjects, and the
// offers of agent deciders' reviews to their runtimes on the bus (core NATS
// requests on countersign.<tenant>.review.<agent>, re-offered with backoff;
// package review is the runtimes' side).
//
// Deciders never write state themselves: they return verdicts, and the
// workers act through the small interfaces declared here, which the
// approvals package implements.
package deciders
