// Package kvstate owns countersign's state in JetStream KV: the buckets and
// their key layout (requests, grants, agents, rules, idempotency), the
// request Record with its KV revision, the one compare-and-set Transition
// with its table of legal moves, and in-memory mirrors of buckets fed by
// one watcher each (the request mirror holding terminal requests packed,
// and starting from its snapshot in the object store bucket snapshots,
// when it has one it can trust).
//
// Every write that changes a request or a grant is a single publish to the
// bucket's subject carrying the change's CloudEvent in binary-mode headers,
// guarded by the expected last sequence of that key: one durable write per
// change, from which the outbox derives the event. Nothing above this
// package compares jetstream errors: they are mapped to the sentinels in
// errors.go.
package kvstate
