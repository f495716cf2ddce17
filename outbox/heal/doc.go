// Package heal keeps a set of derived streams that live in memory alive
// across NATS restarts: Streams.Heal makes sure each exists, re-creating
// any that NATS lost, and runs its owner's re-derivation when one had to
// be re-created (by this process or another) since it last looked. The
// outbox heals its streams on every reconnect and after every failed
// republish; it does not retry here.
package heal
