// Package events owns how countersign's changes travel on NATS: the
// subjects and CloudEvent types (built here and nowhere else), the events'
// binary encoding on NATS headers, the message IDs that deduplicate them,
// and the declarations of the streams that carry them. The nouns they
// speak of live in package domain, beneath it.
//
// Everything here is plain data and pure functions: no connections, no I/O.
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
