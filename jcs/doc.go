// Package jcs owns RFC 8785, the JSON Canonicalization Scheme: the strict
// parse every surface's JSON goes through (Canonicalize refuses duplicate
// keys, invalid UTF-8, lone surrogates, numbers a double cannot hold as
// written, nesting past 10000) and the canonical writer (strings, ES6
// numbers, UTF-16 key order) that the exact-call digest in domain writes
// through. It is plain functions over bytes: no I/O and no other package
// of countersign.
package jcs
