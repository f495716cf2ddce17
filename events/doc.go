// Package events is the bottom of countersign: the domain nouns (Request,
// Decision, Grant, Rule, Capability, Principal, typed IDs), the tenant model
// (members, agents, tokens), capability patterns, the exact-call digest over
// RFC 8785 canonical JSON, NATS subjects and CloudEvent types, their binary
// encoding on NATS headers, and the stream declarations.
//
// Everything here is plain data and pure functions: no connections, no I/O.
// Subjects and event types are built here and nowhere else.
package events
