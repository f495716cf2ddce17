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
// Each operation has one definition here, and every surface (HTTP, the
// bus, JSON-RPC, decision links, Slack) only binds to it: Endpoint(op)
// (endpoint.go) asks Permit (policy.go, the scope and principal kind of
// every Op), then decodes the operation's body strictly (wire.Decode:
// the strict JSON and its JCS digest), then runs the one use case, then
// shapes the result, once; a surface maps its wire onto an Input and the
// Result back, and nothing more. Streams a surface serves itself (events,
// watch, audit) go through Admit. Authenticate reads the bearer token
// (wire.BearerToken, the one parser of it) and takes a surface's sign-in
// sessions as its hook (Sessions). Choices (endpoint_choices.go) says what
// a caller may answer a request with, for every surface, in the words
// Answer refuses anything else. Also here: WithTraceparent, the list
// filters, and the sentinel refusals (errors.go): *problem.Error
// values with their status and code, copied with a detail where each
// rule lives. internal/checks/conformance runs one table of cases through every
// surface and demands the same outcome. The wire every surface shares
// (strict decode, bearer tokens, ParseWait, cursors and the page bound) is approvals/wire.
package approvals
