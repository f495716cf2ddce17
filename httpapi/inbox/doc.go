// Package inbox serves the web inbox of SPEC §10 at "/": a page for
// people, embedded in the binary (plain HTML, CSS and JavaScript modules;
// no build step), that is a client of the public HTTP API only. It signs
// in with a person's token (kept in the tab's session storage), lists the
// person's pending requests live from GET /v1/events (read with fetch, so
// the token travels in the Authorization header, never in a URL), shows
// one request's exact stored arguments (long ones folded), answers with the
// revision that was shown (after a conflict it shows the current version),
// and lists decided requests. Each request has its own address,
// /inbox/<id>, which opens it. For a token with the admin scope it also
// offers the Policy page, /inbox/policy: a pasted config replayed with
// POST /v1/policy/replay (SPEC §16), its changes and summary shown.
//
// Security contract: data from requests (arguments, reasons, notes, ids)
// reaches the page only as text (textContent, text nodes); control, format
// and bidi characters are shown as visible escapes and look-alike letters
// are flagged. Every response of this package carries a
// Content-Security-Policy that allows scripts only from this origin
// ('self', no inline script, no eval) and enforces Trusted Types, so an
// HTML sink such as innerHTML throws instead of parsing data; the page
// cannot be framed; no referrer leaves it.
package inbox
