package audit

import (
	"time"

	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go/jetstream"
)

// Stream names.
const (
	// Stream holds every tenant's entries (each kept its tenant's
	// audit_retention, a per-message TTL), the tree hashes (kept for
	// ever: 64 bytes or so an entry), the projection's cursor and the
	// signer key countersign made.
	Stream = "COUNTERSIGN_AUDIT"
	// InStream holds the changes published for the log (Append) until
	// the writer has read them.
	InStream = "COUNTERSIGN_AUDIT_IN"
)

// inRetention is how long an input waits for the writer: far longer than
// any outage the writer is expected to sit out.
const inRetention = 30 * 24 * time.Hour

// StreamConfigs declares the audit streams, file-backed; replicas is 1
// embedded, 3 clustered.
func StreamConfigs(replicas int) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{{
		Name:        Stream,
		Description: "countersign audit log (SPEC §14): entries, tree hashes, cursor",
		Subjects:    []string{events.AuditEntryFilter, events.AuditTreeFilter, events.AuditCursorSubject, events.AuditKeySubject},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		Replicas:    replicas,
		AllowMsgTTL: true,
		// The writer's batch is atomic: entries, tree hashes and cursor
		// stored together or not at all.
		AllowAtomicPublish: true,
	}, {
		Name:        InStream,
		Description: "countersign audit input: changes no state write carries (sign-ins)",
		Subjects:    []string{events.AuditInFilter},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      inRetention,
		Discard:     jetstream.DiscardOld,
		Duplicates:  2 * time.Minute,
		Replicas:    replicas,
	}}
}
