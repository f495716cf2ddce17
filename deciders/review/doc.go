// Package review is the library for agent runtimes that decide on the bus
// (SPEC §3, §9 "Agent deciders on the bus"), and for people's workers there
// (§9 "People's workers on the bus"). It imports only countersign's events
// package and nats.go, like the adapter.
//
// When a request comes to wait on agent <id>, countersign offers the review
// as a core NATS request on countersign.<tenant>.review.<id>: a CloudEvent
// in binary mode (type dev.countersign.review.requested, subject the
// request id) whose data is the review bundle (the request; the decider's
// id, role, memory and the brief it gave). Serve subscribes that subject in
// the queue group events.ReviewQueue, so any number of instances of one
// agent's runtime share the offers and each offer reaches one of them.
//
// The contract of Serve, in order:
//
//  1. An offer is taken by replying with an empty body at once, before the
//     review starts. An offer is left untaken (no reply, so countersign
//     offers it again later, maybe to another instance) when it cannot be
//     decoded or this instance already runs WithConcurrency reviews. An
//     offer of a request and revision this instance is already reviewing
//     (delivery is at least once) is taken and not reviewed twice.
//  2. fn reviews the bundle, with a ctx that ends at the request's
//     deadline_at or when Serve's ctx ends.
//  3. The answer goes over the bus to countersign.<tenant>.api.answer with
//     Authorization: Bearer <token> and {"id", "expected", "decision",
//     "scope", "reason"}, expected being the offered revision, so a
//     duplicate or late answer changes nothing (409, logged at info). A
//     transient failure (no responders, a timeout, a 5xx or 429) is retried
//     with backoff until the request's deadline; another error is logged.
//  4. If fn returns an error, panics or returns an unknown decision, the
//     runtime abstains with the reason "the agent's runtime could not
//     review this request", passing the request up at once rather than
//     after the agent's review_timeout; the error itself is logged, never
//     sent. If Serve's ctx ended first, nothing is answered: the review
//     timeout passes the request up.
//
// People's workers (SPEC §9 "People's workers on the bus") use DecodePerson
// on the messages of their person's subject (events.PeopleSubject) and
// answer with AnswerRequest; examples/personworker is one.
//
// Runtime is the same machinery with its parts exposed, for a runtime that
// is not one agent on the bus (countersign's built-in model reviewer takes
// every model-reviewed agent's offers on one wildcard subscription and
// answers in-process).
package review
