package kvstate

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publish is the one durable write of a change: the value under key in
// bucket, with header h (its CloudEvent in binary-mode headers, see
// events.ChangeHeaders), guarded by the key's expected last sequence (0:
// the key must not exist). A request write goes through its shard's
// committer (via), which group-commits it; other writes (via nil) are
// published alone.
func (s *Store) publish(ctx context.Context, bucket, key string, data []byte, h nats.Header, last uint64, via *committer) (uint64, error) {
	msg := &nats.Msg{Subject: subjectOf(bucket, key), Data: data, Header: h}
	if via != nil {
		return via.write(ctx, msg, last)
	}
	ack, err := s.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(last))
	if err != nil {
		return 0, mapErr(err)
	}
	return ack.Sequence, nil
}
