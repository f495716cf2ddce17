// Package links makes and checks the tokens of decision links (SPEC §10,
// "Decision links"): <public_url>/d/<token>, one link per person, request
// revision and decision.
//
// # Security contract
//
// A token is base64url (no padding) of a compact binary claim followed by
// the HMAC-SHA256 of that claim under the link secret. The claim holds the
// tenant, the request id, the revision, the person, the decision and the
// deadline (the request's deadline_at, in Unix seconds). Check decodes the
// whole token strictly — any trailing byte, length that does not fit, or
// unknown version or decision is ErrMalformed — compares the MAC in
// constant time (ErrForged), and only then looks at the deadline
// (ErrExpired). It fails closed: no error means every byte was as minted.
// A token proves only who the link was sent to and for which revision;
// the answer it leads to still goes through the same use case as any
// other answer, which refuses a stale revision or a decided request.
package links
