// Package audit owns the audit log of SPEC §14: per tenant, hash-chained
// entries (Entry, Seal), their check (Chain, VerifyLog), the Merkle tree
// over them (Tree, on golang.org/x/mod/sumdb/tlog), signed checkpoints
// (Checkpoint, Signer, on golang.org/x/mod/sumdb/note), the stream that
// keeps them (StreamConfigs), the one projection that writes them
// (Writer) and their reading (Log).
//
// # One ordered projection
//
// The Writer reads its sources, each in stream order through an ordered
// consumer: the requests and grants buckets' streams (each write carries
// the CloudEvent of section 9, and is its durable record: the events
// stream COUNTERSIGN_EVENTS lives in memory, a NATS restart empties it,
// and it may hold a request's events out of order), the agents, rules and
// config buckets' streams, and the audit input stream (Append: sign-ins).
// Each write that is an event becomes one entry of its tenant's log.
// The request and grant writes this process makes come from a Tap
// instead (kvstate tells it each write once acknowledged, with its
// stream sequence), still in stream order: the writer reads from the
// streams only what the tap did not give it (tap.go).
//
// A batch of entries is stored as one JetStream atomic batch: every
// tenant's new entries (packed, a message holding several lines: each
// stored message costs the server a write and an fsync; and compressed
// with S2, Audit-Encoding: read them through Lines), each tenant's
// new tree hashes, and last the
// cursor, the stream sequence of every source up to which the logs hold
// everything (and, when a source message has more changes than a batch
// holds, a config revision for a thousand tenants say, how many of the
// next one's are stored: the next batch stores the rest). The cursor message is guarded by the expected last sequence
// of its subject, so a batch is stored only if no other batch was stored
// since the writer read the cursor, and then wholly. Hence:
//
//   - no entry is written twice: a source message is projected only past
//     the cursor, and the cursor moves with the entries in one write;
//     two writers (two processes, or a restart racing the dead process's
//     last batch) cannot both store the batch after the same cursor: the
//     second is refused whole and starts again from the winner's cursor;
//   - none is skipped: each source is read in order from the cursor on,
//     and a cursor moves only past messages whose entries are stored in
//     the same atomic write. A writer killed mid-batch stored nothing of
//     it: the next one starts from the last stored cursor. A server
//     stopped by a machine's crash while it applied a batch, its staged
//     copy lost, leaves the stream ending with part of the batch:
//     DropPartialBatch, at the next start, removes that part before the
//     log is read, and the writer stores the batch again.
//
// Entries take seq and prev from the tenant's log as stored (the tree
// messages carry the last hash), so the chain is continuous whatever
// process writes next. Each entry is kept its tenant's audit_retention
// (a per-message TTL); the tree hashes are kept for ever, so checkpoints
// and proofs cover entries that retention removed.
//
// Sign-ins: the sign-in code calls Append (an Input with a unique ID,
// Type events.TypeSignIn), which publishes on countersign.<tenant>.audit.in
// (deduplicated by Nats-Msg-Id); the Writer projects it like any source.
package audit
