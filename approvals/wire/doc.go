// Package wire is the wire of the endpoint layer, the same on every
// surface (SPEC §5): the strict JSON decode of a body (one object, no
// duplicate or unknown keys, names byte-for-byte, exact numbers) and its
// JCS digest, the bearer token of an Authorization header, the body and
// long-poll bounds (MaxBody, MaxWait, ParseWait), the list cursors, and
// pages cut at MaxPageBytes. It holds no rule of any operation:
// approvals' endpoints decode and shape through it, and every refusal is
// a problem.Error about the field at fault.
package wire
