// Package views owns the read model of the state kvstate stores: the
// configured tenants, and in-memory mirrors of the buckets (agents,
// grants, rules, delegations, requests), each fed by one watcher, with
// sorted secondary indexes for paging. Lookups never touch the network.
//
// The request mirror holds a pending request in full and a terminal one
// packed (views/pack), read back by peeking at its stored JSON (peek.go),
// and starts from its snapshot in the object store bucket
// kvstate.SnapshotBucket when it has one it can trust (snapshot.go, in
// the format of views/snapshot).
//
// A write made in this process goes through Views.WriteRequest, which
// puts the written record in the mirror at once, so that a writer reads
// its own writes; the watcher brings every other process's writes a
// moment later. A revision never goes backwards.
package views
