// Package layout has no code: its test checks that imports point down the
// layout of STYLE.md (cmd → httpapi, busapi → approvals → deciders → judge, kvstate
// → events), that the adapter imports only events from this module, and
// that the judge touches neither NATS nor state.
package layout
