// Package deciders owns who decides a request: the check order of SPEC §2
// (member policy, reads and own subagents, grants, rules through the judge,
// then the chain), what "holds a capability" means for an agent or a
// person (SPEC §3), who the next decider up the chain is, and the workers
// that act on time and on work subjects: the timer worker that expires
// requests at their deadline and passes an agent's review up after its
// review_timeout and moves a request from a person to their backup after
// their answer_within (SPEC §12), the worker that consumes decider work
// subjects, and the offers of agent deciders' reviews to their runtimes on the bus (core NATS
// requests on countersign.<tenant>.review.<agent>, re-offered with backoff;
// package review is the runtimes' side).
//
// Deciders never write state themselves: they return verdicts, and the
// workers act through the small interfaces declared here, which the
// approvals package implements.
//
// # Timers across processes
//
// Every deciders process mirrors every request, but each request's timer
// (deadline → Expire, review_timeout → PassUp, answer_within →
// MoveToBackup; approval_ttl needs none: a claim checks
// decision.expires_at) is armed in one of them. Retention is
// not a timer: the Sweeper follows each tenant's request writes in stream
// order and removes a terminal record once its request_retention has
// passed (RemoveRequest checks the revision, so several processes sweeping
// the same record remove it once). The processes form a Group:
// each puts its key in the KV bucket "deciders" every third of its TTL
// (10 s), and a request belongs to the live member with the highest hash
// of (member, request key), so a member leaving moves only its own share.
// A member that stops deletes its key and the others arm its share at
// once; one that is killed stops putting it, the key ages out with a purge
// marker every watcher sees, and the others arm its share then (a deadline
// it held fires at most a TTL late, or at once if it passed). While two
// members' views differ, a request may be armed in both (the
// compare-and-set makes that safe), never in neither for longer.
//
// JetStream message schedules (nats-server 2.12+) were the alternative: a
// scheduled message per deadline, acted on by one work-queue consumer. They
// fire on the server's clock, so the stepped clock of the tests could not
// drive them, and every write that moves a deadline (escalation restarts a
// review timeout) would have to
// replace its schedule in the same atomic write. The partition keeps the
// timers local, on the injected clock, and needs one small bucket.
//
// TestDeadlinesArmedOnceAcrossDeciders, TestDeadlineToExpiryWithTwoDeciders
// (internal/app) and TestDeadMembersDeadlinesFireInTheLiveOne hold this
// contract; how the shares and latencies came out is in
// docs/operators/performance.md, "Measurements behind the design".
package deciders
