// Package pack compresses a request's stored JSON for the read model: S2
// against a dictionary of typical records and a sample of the
// deployment's own, with the call digest's hex digits lifted out, into
// values carved from shared arenas. What a record packs to and what
// packing costs: docs/operators/performance.md, "Measurements behind the
// design".
package pack
