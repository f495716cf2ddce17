package events

import "github.com/nats-io/nats.go"

// Modes of an approval policy or a read rule (SPEC §16): enforced (the
// default) decides; shadow is evaluated on live requests and never
// decides.
const (
	ModeEnforce = "enforce"
	ModeShadow  = "shadow"
)

// Shadow is what a rule in shadow mode would have done with a request at
// its creation (SPEC §16): ID is the approval policy's id or the read
// rule's pattern; Outcome the status it would have left (approved,
// denied, pending); Approver, for pending, who it would have waited on.
type Shadow struct {
	ID       string `json:"id"`
	Outcome  Status `json:"outcome"`
	Approver *Ref   `json:"approver,omitempty"`
	// RequiredApprovals is the quorum it would have asked of Approver.
	RequiredApprovals int `json:"required_approvals,omitempty"`
}

// Agrees reports whether s is what r's creation did: the same status and,
// for a pending r, the same approver and quorum.
func (s Shadow) Agrees(r *Request) bool {
	if s.Outcome != r.Status {
		return false
	}
	if s.Outcome != StatusPending {
		return true
	}
	return s.Approver != nil && r.Approver != nil && *s.Approver == *r.Approver && s.RequiredApprovals == r.Quorum()
}

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
