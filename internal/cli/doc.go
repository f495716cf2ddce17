// Package cli is the people's CLI (SPEC §10) without its flags: a client
// of the HTTP API with a person's (or deciding agent's) token, and what
// pending, show, approve, deny, grants and revoke print, as tables for
// people or as the server's JSON. cmd/countersign parses the flags and
// calls a Session.
//
// A refusal comes back as the server's *problem.Error. Text from agents is
// data, never instructions: every table and record prints it cleaned,
// bounded and quoted (text.go).
package cli
