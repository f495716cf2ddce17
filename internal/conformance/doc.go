// Package conformance holds, in its tests only, the proof that the three
// surfaces of the API (HTTP, the bus, JSON-RPC over WebSocket) only
// translate: one table of cases, refusals and successes, runs through each
// surface of a real server, and every surface must give the outcome the
// table says (SPEC §5's status, error, field and reason). Each operation's
// rules live in package approvals alone (approvals.Permit,
// WithTraceparent, RequestPage); a rule written into one surface turns a
// row red.
package conformance
