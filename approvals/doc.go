// Package approvals holds the use cases of countersign: Submit, Get, Wait,
// List, Answer, Cancel, Claim, Expire and PassUp on requests; grants,
// rules and subagent registration; and the outbox that derives every
// CloudEvent and work message from the state's own streams. It is the one
// place that runs the check order, writes state and causes events.
//
// Every state change is one compare-and-set through kvstate.Transition
// (or a create), and its event travels in the same write; the Outbox
// republishes it to the events and work streams, deduplicated by
// Nats-Msg-Id, so a crash can neither lose nor duplicate an event.
package approvals
