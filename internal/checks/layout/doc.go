// Package layout has no code: its test checks that imports point down the
// layout of STYLE.md (cmd → httpapi, busapi → approvals → deciders → views →
// judge, kvstate → events → domain → jcs, problem), that the adapter imports
// only domain, problem and backoff from this module, that the agent runtimes'
// library deciders/review imports only domain and events (and only nats.go
// besides the standard library), and that the judge touches neither NATS nor
// state.
package layout
