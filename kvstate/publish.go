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
	var seq uint64
	if via != nil {
		var err error
		if seq, err = via.write(ctx, msg, last); err != nil {
			return 0, err
		}
	} else {
		ack, err := s.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(last))
		if err != nil {
			return 0, mapErr(err)
		}
		seq = ack.Sequence
	}
	if tap := s.tap.Load(); tap != nil {
		(*tap)(StreamOf(bucket), seq, msg)
	}
	return seq, nil
}

// SetTap makes every write published here (requests and grants) told to
// fn once acknowledged: its stream, its stream sequence and the message
// as published, not changed after. fn must not block; nil stops it.
// The audit writer takes them (audit.Tap) rather than a delivery of its
// own.
func (s *Store) SetTap(fn func(stream string, seq uint64, m *nats.Msg)) {
	if fn == nil {
		s.tap.Store(nil)
		return
	}
	s.tap.Store(&fn)
}
