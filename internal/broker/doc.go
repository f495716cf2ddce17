// Package broker starts the embedded nats-server with JetStream, or
// connects to an external NATS cluster, and hands back a JetStream context.
//
// The embedded server fsyncs every write (sync_interval: always): NATS'
// default syncs only every two minutes, and a machine crash would then lose
// writes it had acknowledged.
package broker
