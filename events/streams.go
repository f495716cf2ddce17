package events

import (
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Streams derived from the state by the outbox. Each deduplicates with
// Nats-Msg-Id, so the same change may be republished safely.
const (
	// EventsStream holds recent CloudEvents, countersign.<tenant>.events.>,
	// for subscribers. It is a derived view kept in memory: the durable
	// record of every event is the state write that carried it (the KV
	// streams keep each request's revisions with their CloudEvent headers),
	// so it costs no fsync of its own. A NATS restart empties it (the
	// outbox re-creates it); GET /v1/events reads the KV streams instead.
	EventsStream = "COUNTERSIGN_EVENTS"
	// WorkStream holds agent deciders' work messages,
	// countersign.<tenant>.decide.agent.>, each removed once a worker acks
	// it. It is kept in memory: every work message is re-derived from the
	// pending records when a decider process starts, and after a NATS
	// restart lost the stream, so it needs no fsync of its own.
	WorkStream = "COUNTERSIGN_WORK"
	// PeopleWorkStream takes the work messages of people and groups,
	// countersign.<tenant>.decide.person.> and .decide.group.>: each is
	// stored, acknowledged and deduplicated as every derived message is,
	// and reaches whoever subscribes to its subject, but no countersign
	// process consumes it (the request waits in the inbox), and with no
	// consumer its interest retention removes it as it is stored: no
	// delivery, no ack, no memory held.
	PeopleWorkStream = "COUNTERSIGN_PEOPLE_WORK"
)

// DeciderConsumer is the durable consumer shared by decider workers.
const DeciderConsumer = "deciders"

// EventsStreamBytes bounds the in-memory events stream (oldest dropped):
// about 35,000 events of a 900-byte record each. It is a live feed, held
// in the server's heap (a 256 MiB cap cost 277 MB of a filled server's
// heap); the durable, resumable feed is GET /v1/events.
const EventsStreamBytes = 32 << 20

// dedupWindow is how long a Nats-Msg-Id is remembered: far longer than a
// redelivery takes (the outbox's ack wait is 10 s), and NATS' own default.
// The server keeps every id of the window in memory, about 120 bytes each:
// a 10-minute window at 2,500 creates/s held about 110 MB.
const dedupWindow = 2 * time.Minute

// StreamConfigs declares the derived streams. Replicas is 1 on the embedded
// server and 3 on a cluster.
func StreamConfigs(replicas int) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{{
		Name:        EventsStream,
		Description: "countersign CloudEvents (binary mode), derived from the state",
		Subjects:    []string{EventsFilter},
		Storage:     jetstream.MemoryStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      24 * time.Hour,
		MaxBytes:    EventsStreamBytes,
		Discard:     jetstream.DiscardOld,
		Duplicates:  dedupWindow,
		Replicas:    replicas,
	}, {
		Name:        WorkStream,
		Description: "countersign agent deciders' work messages, derived from the state (re-derived at start)",
		Subjects:    []string{AgentWorkFilter},
		Storage:     jetstream.MemoryStorage,
		Retention:   jetstream.WorkQueuePolicy,
		Duplicates:  dedupWindow,
		Replicas:    replicas,
	}, {
		Name:        PeopleWorkStream,
		Description: "countersign people's and groups' work messages, derived from the state, consumed by no countersign process",
		Subjects:    slices.Clone(PeopleWorkFilters),
		Storage:     jetstream.MemoryStorage,
		Retention:   jetstream.InterestPolicy,
		Duplicates:  dedupWindow,
		Replicas:    replicas,
	}}
}

// DeciderConsumerConfig declares the one durable consumer that decider
// workers in any number of processes share.
func DeciderConsumerConfig() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       DeciderConsumer,
		FilterSubject: AgentWorkFilter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		MaxDeliver:    10,
		MaxAckPending: 10000,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
}

// SameStream reports whether a stream's configuration has what want
// declares: the fields StreamConfigs sets (a zero limit in want is the
// server's default and is not compared).
func SameStream(have, want jetstream.StreamConfig) bool {
	if have.Description != want.Description || !slices.Equal(have.Subjects, want.Subjects) ||
		have.Storage != want.Storage || have.Retention != want.Retention ||
		have.Discard != want.Discard || have.Replicas != want.Replicas {
		return false
	}
	limit := func(h, w int64) bool { return w == 0 || h == w }
	return limit(int64(have.MaxAge), int64(want.MaxAge)) && limit(have.MaxBytes, want.MaxBytes) &&
		limit(int64(have.Duplicates), int64(want.Duplicates))
}
