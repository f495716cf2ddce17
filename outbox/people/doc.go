// Package people makes the messages that tell people's workers on the bus
// (SPEC §9) about a stored change of a request: on
// countersign.<tenant>.people.<person>, a review.requested when the
// request comes to wait on them (data: the person's review bundle) and a
// review.withdrawn when it stops ({"request_id", "status"}), read from
// the stored record in one pass.
//
// These are core NATS messages, at most once: the outbox sends them after
// it republished the change's event for the first time (a redelivered
// change finds its event a duplicate and tells nobody again) and after its
// ack of the state message is confirmed (so no process gets the change
// again). The inbox (api.list) stays the truth.
package people
