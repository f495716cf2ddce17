package approvals

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
)

// Event is one CloudEvent of a change, with the change's own id: its
// Nats-Msg-Id, <request id>:<revision> or <grant id>:created|revoked.
// The id stays valid across restarts of countersign and of NATS, and
// resumes a stream right after the change (EventsAfter).
type Event struct {
	ID   string
	Type string
	// JSON is the event in structured mode: the attributes and the data.
	JSON []byte
}

// EventsFrom is where a stream of events starts.
type EventsFrom struct{ cur kvstate.ChangeCursor }

// EventsAfter returns where c's events resume after the event with id
// lastID, and whether that event was found among those c may see. When
// it was not (empty, unparsable, never made, removed after its retention,
// or not c's to see), the events start from now.
func (s *Service) EventsAfter(ctx context.Context, c Caller, lastID string) (EventsFrom, bool, error) {
	if id, ok := events.ParseMsgID(lastID); ok {
		cur, ch, err := s.store.CursorAfter(ctx, c.Tenant.ID, id)
		if err == nil {
			if _, ok := s.visibleEvent(c, ch); ok {
				return EventsFrom{cur}, true, nil
			}
		} else if !errors.Is(err, kvstate.ErrNotFound) {
			return EventsFrom{}, false, stateErr(err, ErrUnavailable)
		}
	}
	cur, err := s.store.CursorNow(ctx, c.Tenant.ID)
	return EventsFrom{cur}, false, stateErr(err, ErrUnavailable)
}

// Events streams the tenant's events that c may see, from from, calling
// fn for each until ctx ends or fn fails. The events are read from the
// state's own durable streams (the writes that carried them), not from the
// in-memory events stream, so a NATS restart pauses them and loses none.
// When c stops authenticating (Hold) the stream ends, nothing more is
// delivered, and Events returns the 401 ErrUnauthenticated.
func (s *Service) Events(ctx context.Context, c Caller, from EventsFrom, fn func(Event) error) error {
	ctx, release := s.Hold(ctx, c)
	defer release()
	err := s.store.Changes(ctx, c.Tenant.ID, from.cur, func(ch kvstate.Change) error {
		ev, ok := s.visibleEvent(c, ch)
		if !ok {
			return nil
		}
		if ctx.Err() != nil {
			return heldErr(ctx) // revoked: nothing more is delivered
		}
		return fn(ev)
	})
	if Revoked(ctx) {
		return errRevoked
	}
	return stateErr(err, ErrUnavailable)
}

// visibleEvent decodes a stored event and reports whether c may see it:
// a request event if c may see the request, a grant event if c may see
// the grant.
func (s *Service) visibleEvent(c Caller, m kvstate.Change) (Event, bool) {
	ce, err := events.DecodeHeaders(m.Header)
	if err != nil {
		return Event{}, false
	}
	switch ce.Type() {
	case events.TypeGrantCreated, events.TypeGrantRevoked:
		var g domain.Grant
		if json.Unmarshal(m.Data, &g) != nil || !s.grantVisible(c, &g) {
			return Event{}, false
		}
	default:
		var r domain.Request
		if json.Unmarshal(m.Data, &r) != nil || !s.visible(c, &r) {
			return Event{}, false
		}
	}
	// The data as stored: SetData and json.Marshal would encode it again,
	// HTML-escaped.
	ce.SetDataContentType("application/json")
	ce.DataEncoded, ce.DataBase64 = m.Data, false
	b, err := ce.MarshalJSON()
	if err != nil {
		return Event{}, false
	}
	return Event{ID: events.EventMsgID(ce), Type: ce.Type(), JSON: b}, true
}
