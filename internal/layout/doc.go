// Package layout has no code: its test checks that imports point down the
// layout of STYLE.md (cmd → httpapi, busapi → approvals → deciders → judge,
// kvstate → events), that the adapter and the agent runtimes' library
// deciders/review import only events from this module (and the latter only
// nats.go besides the standard library), and that the judge touches
// neither NATS nor state.
package layout
