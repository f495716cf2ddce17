// Package approvals holds the use cases of countersign: Submit, Get, Wait,
// List, Answer, Cancel, Claim, Expire and PassUp on requests; grants,
// rules and subagent registration. It is the one place that runs the
// check order, writes state and causes events.
//
// Every state change is one compare-and-set through kvstate.Transition
// (or a create), and its event travels in the same write; package outbox
// republishes it to the events and work streams, deduplicated by
// Nats-Msg-Id, so a crash can neither lose nor duplicate an event.
//
// Authority flows down (SPEC §5, authority.go): an agent may restrict its
// descendants and never loosen anything for itself or an agent above it;
// loosening takes the member's person or admin. RetireAgent ends a
// registered subagent and those below it. Agent records (registration,
// retirement) are plain compare-and-set writes with no CloudEvent: SPEC §9
// names no agent event type; the requests a retirement cancels emit theirs.
//
// What every surface (HTTP, the bus, JSON-RPC) shares also lives here, so
// that no rule has a second copy and the surfaces only translate: each
// operation's policy (policy.go: Permit and Admit, the scope and principal
// kind of every Op; WithTraceparent, the trace context a submit carries),
// Authenticate (bearer token), Decode (the strict JSON body and its JCS
// digest), ParseWait and the list filters, the page bound (RequestPage,
// GrantPage: MaxPageBytes), and the sentinel refusals (errors.go):
// *problem.Error values with their status and code, copied with a detail
// where each rule lives. internal/conformance runs one table of cases
// through all three surfaces and demands the same outcome.
package approvals
