// Package signin owns people's sign-in with an OpenID Connect provider
// (SPEC §13): the provider client (authorization code flow with PKCE and a
// nonce, and the device authorization grant of RFC 8628) and the sessions
// it leads to, kept in JetStream KV so that every process and restart sees
// the same ones.
//
// # Security contract
//
// An ID token is accepted only when go-oidc's verifier accepts it: signed
// by a key of the issuer's JWKS with an asymmetric algorithm the provider
// advertises (never "none", never HMAC), with the configured issuer, the
// client id in aud, and exp in the future; the code flow's token must also
// carry the nonce minted for that flow. A flow (state, nonce, PKCE
// verifier) is used at most once, also across processes: Take deletes it
// with a compare-and-set. A session token is 32 random bytes; the store
// keeps only its SHA-256, and a session lives at most MaxSession.
package signin
