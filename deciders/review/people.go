package review

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// PersonBundle is the data of a review.requested on a person's subject
// (SPEC §9, "People's workers on the bus"): the request and the person it
// waits on.
type PersonBundle = domain.PersonReviewBundle

// Withdrawn is the data of a review.withdrawn: the request no longer waits
// on the person (answered, expired, cancelled, or moved to someone else).
type Withdrawn = domain.ReviewWithdrawn

// PersonEvent is one message of a person's subject: exactly one of
// Requested and Withdrawn is set.
type PersonEvent struct {
	Requested *PersonBundle
	Withdrawn *Withdrawn
}

// DecodePerson reads a message of a person's subject
// (events.PeopleSubject): its CloudEvent headers, of type
// dev.countersign.review.requested or .withdrawn, and its data. Errors
// wrap ErrBadOffer.
func DecodePerson(m *nats.Msg) (PersonEvent, error) {
	var pe PersonEvent
	e, err := events.DecodeHeaders(m.Header)
	if err != nil {
		return pe, fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	var id domain.RequestID
	switch e.Type() {
	case events.TypeReviewRequested:
		pe.Requested = new(PersonBundle)
		err = json.Unmarshal(m.Data, pe.Requested)
		id = pe.Requested.Request.ID
	case events.TypeReviewWithdrawn:
		pe.Withdrawn = new(Withdrawn)
		err = json.Unmarshal(m.Data, pe.Withdrawn)
		id = pe.Withdrawn.RequestID
	default:
		return pe, fmt.Errorf("%w: type %q", ErrBadOffer, e.Type())
	}
	if err != nil {
		return PersonEvent{}, fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	if string(id) != e.Subject() {
		return PersonEvent{}, fmt.Errorf("%w: data does not match its event", ErrBadOffer)
	}
	return pe, nil
}

// AnswerRequest answers request r (at its revision) over the bus with
// token as BusAnswer does, for a person's worker: one attempt bounded by
// wait, transient failures retried until ctx ends. A 409 is ErrConflict;
// any other refusal wraps ErrAnswer.
func AnswerRequest(ctx context.Context, nc *nats.Conn, token string, r *domain.Request, a Answer, wait time.Duration) error {
	return BusAnswer(nc, r.Tenant, token, wait)(ctx, Bundle{Request: *r}, a)
}
