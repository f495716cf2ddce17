// Package notify tells people that a request is waiting, outside
// countersign: it delivers a tenant's events to its webhooks (SPEC §10,
// "Telling people, and letting them answer anywhere").
//
// Each endpoint gets every event it subscribes to as a structured-mode
// CloudEvent (application/cloudevents+json, made with the CloudEvents SDK)
// or, with format slack, as a Slack Block Kit message with Approve and Deny
// buttons. Every POST is signed the Standard Webhooks way (webhook-id,
// webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>">).
//
// A Slack message (and its rewrite after a click) shows what the agent
// wrote through package display (escapes, look-alike words marked) and
// escapes Slack's & < > in every text field, so agent text never becomes
// a mention, a link or markup (SPEC §10).
//
// # Delivery contract
//
//   - The events are read from the state's own durable streams (the KV
//     writes that carried them), never from the decision path: a slow or
//     failing endpoint never delays or changes a decision.
//   - Delivery is at least once. The webhook-id is the event's id, the
//     same on every retry, so a receiver drops repeats by it.
//   - Events of one request (or grant) are delivered in order of their
//     revision, one at a time; events of different requests do not wait
//     for each other, and endpoints never wait for each other.
//   - A failed attempt (a transport error, a timeout, or any status but
//     2xx; redirects are not followed) is retried with exponential backoff
//     and jitter until the event is Tuning.MaxAge old (24h), then dropped
//     and counted.
//   - Progress is kept in JetStream (the KV bucket "webhooks": per endpoint
//     and stream, the sequence below which everything is done and the
//     done sequences above it), so a restart resumes the retries where
//     they were; an event delivered just before a crash may be sent again.
//   - Each attempt is bounded: a timeout, no redirects, and at most
//     Tuning.MaxResponse bytes of the answer read.
//
// One process delivers for an endpoint at a time: each feed holds a lease
// in the same bucket, renewed while it runs.
package notify
