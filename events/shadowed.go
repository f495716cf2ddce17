package events

import "github.com/nats-io/nats.go"

// TypeRequestShadowed is the event of a request created while rules in
// shadow mode matched it (SPEC §16): the record, with its shadow field, on
// the bus's events stream beside its created or decided event.
const TypeRequestShadowed = "dev.countersign.request.shadowed"

// HeaderShadowed is "1" on a request's creation whose record holds
// shadows: the outbox derives its request.shadowed event from it. Like
// HeaderWorkTo, it is internal and is not copied to events.
const HeaderShadowed = "Countersign-Shadowed"

// ShadowedHeaders writes into dst the CloudEvent headers of the
// request.shadowed event derived from a creation's stored headers src:
// the same attributes, its own type and id.
func ShadowedHeaders(dst, src nats.Header) {
	CopyEventHeaders(dst, src)
	dst[ceHeaderPrefix+"type"] = []string{percentEncode(TypeRequestShadowed)}
	if id, ok := src[ceHeaderPrefix+"id"]; ok && len(id) > 0 {
		dst[ceHeaderPrefix+"id"] = []string{id[0] + "-shadowed"}
	}
}
