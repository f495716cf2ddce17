// Package problem is the one refusal type of countersign and its wire
// shape (SPEC §5). An *Error carries the HTTP status, the problem's error
// code, the field or reason it is about and a detail for people; it is made
// where the rule lives (approvals' sentinels and constructors, a surface's
// own refusals) and travels up unchanged.
//
// Every surface maps an error with From: the HTTP API writes its Problem as
// application/problem+json, the bus API as an error reply's body, the
// JSON-RPC stream as an error's data. From never reads an error's text: an
// error that is not an *Error is 500 Internal, and what it said goes to the
// logs only. Clients (the adapter, the CLI) turn an answer back into an
// *Error with Parse.
//
// The package imports only the standard library, so that the adapter, a
// library agents import, may share it.
package problem
