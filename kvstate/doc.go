// Package kvstate owns countersign's state in JetStream KV: the buckets and
// their key layout (requests, grants, agents, rules, idempotency), the
// request Record with its KV revision, the one compare-and-set Transition
// with its table of legal moves, and the commit batching of request and
// idempotency writes. The read model over these buckets (the in-memory
// mirrors and their snapshots) is package views.
//
// Every write that changes a request or a grant is a single publish to the
// bucket's subject carrying the change's CloudEvent in binary-mode headers,
// guarded by the expected last sequence of that key: one durable write per
// change, from which the outbox derives the event. Nothing above this
// package compares jetstream errors: they are mapped to the sentinels in
// errors.go (MapErr, for the read model).
package kvstate
