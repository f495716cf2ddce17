package approvals

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go/jetstream"
)

// Event is one CloudEvent from the events stream, with the stream
// sequence that resumes after it.
type Event struct {
	Seq  uint64
	Type string
	// JSON is the event in structured mode: the attributes and the data.
	JSON []byte
}

// Events streams the tenant's events that c may see, after stream
// sequence after (0: only new ones), calling fn for each until ctx ends
// or fn fails. One ordered consumer per call.
func (s *Service) Events(ctx context.Context, c Caller, after uint64, fn func(Event) error) error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{events.TenantEventsFilter(c.Tenant.ID)},
		DeliverPolicy: jetstream.DeliverNewPolicy}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	cons, err := s.store.JetStream().OrderedConsumer(ctx, events.EventsStream, cfg)
	if err != nil {
		return stateErr(fmt.Errorf("approvals: events: %w", err), ErrUnavailable)
	}
	it, err := cons.Messages()
	if err != nil {
		return stateErr(err, ErrUnavailable)
	}
	defer it.Stop()
	go func() { <-ctx.Done(); it.Stop() }()
	for {
		m, err := it.Next()
		if err != nil {
			return nil // stopped: ctx ended or the stream went away
		}
		ev, ok := s.visibleEvent(c, m)
		if !ok {
			continue
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// visibleEvent decodes a stored event and reports whether c may see it:
// a request event if c may see the request, a grant event if c may see
// the grant.
func (s *Service) visibleEvent(c Caller, m jetstream.Msg) (Event, bool) {
	ce, err := events.DecodeHeaders(m.Headers())
	if err != nil {
		return Event{}, false
	}
	switch ce.Type() {
	case events.TypeGrantCreated, events.TypeGrantRevoked:
		var g events.Grant
		if json.Unmarshal(m.Data(), &g) != nil || !s.grantVisible(c, &g) {
			return Event{}, false
		}
	default:
		var r events.Request
		if json.Unmarshal(m.Data(), &r) != nil || !s.visible(c, &r) {
			return Event{}, false
		}
	}
	// The data as stored: SetData and json.Marshal would encode it again,
	// HTML-escaped.
	ce.SetDataContentType("application/json")
	ce.DataEncoded, ce.DataBase64 = m.Data(), false
	b, err := ce.MarshalJSON()
	if err != nil {
		return Event{}, false
	}
	meta, _ := m.Metadata()
	seq := uint64(0)
	if meta != nil {
		seq = meta.Sequence.Stream
	}
	return Event{Seq: seq, Type: ce.Type(), JSON: b}, true
}
