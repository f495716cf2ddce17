// Package events is the bottom of countersign's domain: the domain nouns
// (Request, Decision, Grant, Rule, Capability, Principal, typed IDs), the
// tenant model (members, agents, tokens), capability patterns, the
// exact-call digest over RFC 8785 canonical JSON (written through package
// jcs, the one package beneath it), NATS subjects and CloudEvent types,
// their binary encoding on NATS headers, and the stream declarations.
//
// Everything here is plain data and pure functions: no connections, no I/O.
// Subjects and event types are built here and nowhere else.
//
// # CloudEvents on NATS headers
//
// Events are built with the CloudEvents SDK's event type (NewEvent), and
// every reader outside (the SDK's protocol/nats_jetstream/v2 binding
// included) can read them: TestSDKReaderDecodesOurEvents decodes a stored
// change through that binding's message reader into the same event. The
// headers themselves are still written and read by hand (EncodeHeaders,
// DecodeHeaders), and the outbox, the event streams and webhook delivery
// read a change through DecodeHeaders and name it with EventMsgID:
//
//   - the binding's writer and reader do not percent-encode or decode
//     header values (the NATS binding follows the HTTP binding's §3.1.3.2,
//     which requires it), and its writer sets no Content-Type;
//   - the writer costs more on the hot path, every state change, and
//     decoding costs no less (BenchmarkEncodeHeaders,
//     BenchmarkDecodeHeaders; the figures are in docs/operators/performance.md,
//     "Measurements behind the design").
package events
