// Package app wires one countersign process: NATS (embedded or external),
// the state and its views, the use cases, the HTTP API and the workers of
// the roles it runs, with a graceful shutdown. cmd/countersign and the
// test servers both start processes through it.
package app
