package kvstate

import (
	"context"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publish is the one durable write of a change: the value under key in
// bucket, its CloudEvent in binary-mode headers, guarded by the key's
// expected last sequence (0: the key must not exist).
func (s *Store) publish(ctx context.Context, bucket, key string, data []byte, ev cloudevents.Event, last uint64, extra nats.Header) (uint64, error) {
	msg := nats.NewMsg(subjectOf(bucket, key))
	msg.Data = data
	for k, v := range extra {
		msg.Header[k] = v
	}
	if err := events.EncodeHeaders(ev, msg.Header); err != nil {
		return 0, err
	}
	if bucket == BucketRequests {
		return s.commits.write(ctx, msg, last)
	}
	ack, err := s.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(last))
	if err != nil {
		return 0, mapErr(err)
	}
	return ack.Sequence, nil
}
