// Package conformance holds, in its tests only, the proof that the
// surfaces of the API (HTTP, the bus, JSON-RPC over WebSocket, decision
// links, Slack clicks) only translate: one table of cases, refusals and
// successes, runs through each surface of a real server, and every
// surface must give the outcome the table says (SPEC §5's status, error,
// field and reason) wherever it offers the operation and can stand for
// the caller (a click is a person with approvals:read and
// approvals:write, answering once). Each operation's rules live in
// package approvals alone (approvals.Service.Endpoint); a rule written
// into one surface turns a row red.
package conformance
