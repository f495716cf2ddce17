// Package outbox owns the worker that derives every CloudEvent and work
// message from the state's own streams (SPEC §9): a durable consumer on
// each state stream republishes the event each write carries to the events
// stream and, when the request now waits on a decider, its work message,
// deduplicated by Nats-Msg-Id, and acks the write only once those are
// stored, so a crash can neither lose nor duplicate an event. It retries
// until NATS takes each (retry.go), tells people's workers (the
// messages of outbox/people), at most once, keeps the in-memory derived
// streams alive across NATS restarts (outbox/heal), and repairs the
// grants an answer left unwritten through the Grants it is given. It
// ranks beside deciders and notify, the other workers on JetStream:
// approvals writes state, the outbox follows it.
//
// nats-server cannot derive these streams itself: a source's subject
// transform maps subject tokens only, and a request's subject
// ($KV.requests.<tenant>.<id>) does not hold the event's type or the
// decider that the derived subjects name. BenchmarkDerive compares the
// outbox with such a sourced stream (figures in docs/operators/performance.md).
package outbox
