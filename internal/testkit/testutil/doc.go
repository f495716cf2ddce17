// Package testutil gives tests real parts: an embedded JetStream server in
// t.TempDir() with the production options, and Eventually for waiting on
// asynchronous effects without sleeping blindly.
package testutil
