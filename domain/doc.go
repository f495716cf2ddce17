// Package domain holds countersign's nouns, at the bottom of its layout:
// the request and its decision (Request, Decision, Status, Escalation,
// quorum and endorsements), grants and rules, capabilities and their
// patterns, principals (Ref) and typed IDs made in one place, the tenant
// model (members, groups, agents, tokens and their scopes), the exact-call
// digest over RFC 8785 canonical JSON (written through package jcs, the one
// package beneath it), what a shell call's subject is, and what a rule in
// shadow mode would have done.
//
// Everything here is plain data and pure functions: no connections, no
// I/O, no NATS. How these nouns travel (subjects, CloudEvents, streams) is
// package events, above it.
package domain
