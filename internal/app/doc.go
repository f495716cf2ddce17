// Package app wires one countersign process: NATS (embedded or external),
// the state and its views, the use cases, the HTTP API and the workers of
// the roles it runs, with a graceful shutdown. New builds and validates
// it all from Config and starts nothing; Run starts every worker on its
// ctx and returns once they stopped, after ctx ended. cmd/countersign and
// the test servers both run processes through it.
package app
