package kvstate

import (
	"context"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Change is one stored write of a request or a grant that carried a
// CloudEvent: the durable record of that event (SPEC §9), the record or
// grant with the event's attributes in binary-mode headers.
type Change struct {
	Header nats.Header
	Data   []byte
}

// ChangeCursor is where a reader of a tenant's changes starts in each of
// the two streams whose writes carry events (changeBuckets).
type ChangeCursor struct {
	starts [2]changeStart
}

// changeStart is a stream sequence or, when seq is 0, a time.
type changeStart struct {
	seq uint64
	at  time.Time
}

// changeBuckets are the buckets whose writes carry tenant's events: its
// requests shard's and the grants'.
func (s *Store) changeBuckets(tenant domain.TenantID) [2]string {
	return [2]string{s.RequestBucketOf(tenant), BucketGrants}
}

// ResumeSkew is how far before a resumed change the other stream starts
// again (CursorAfter): requests and grants are two streams, delivered side
// by side, so a grant stored just before the request change a client saw
// last may not have reached it yet. It is delivered again rather than
// missed.
const ResumeSkew = 2 * time.Second

// CursorNow returns a cursor at the current end of both streams of
// tenant's changes: only changes stored from now on.
func (s *Store) CursorNow(ctx context.Context, tenant domain.TenantID) (ChangeCursor, error) {
	var c ChangeCursor
	for i, b := range s.changeBuckets(tenant) {
		st, err := s.js.Stream(ctx, StreamOf(b))
		if err != nil {
			return c, mapErr(err)
		}
		c.starts[i].seq = st.CachedInfo().State.LastSeq + 1
	}
	return c, nil
}

// CursorAfter finds the stored write of change id in tenant and returns a
// cursor right after it, and the change itself: its own stream resumes at
// the next write, the other one ResumeSkew before it was stored. It returns
// ErrNotFound if that write is not stored (never made, or removed with its
// request after the retention).
func (s *Store) CursorAfter(ctx context.Context, tenant domain.TenantID, id events.ChangeID) (ChangeCursor, Change, error) {
	buckets := s.changeBuckets(tenant)
	i, subject := 0, subjectOf(buckets[0], RequestKey(tenant, id.Request))
	match := func(h nats.Header) bool { return h.Get("ce-revision") == strconv.FormatUint(id.Revision, 10) }
	if id.Grant != "" {
		typ := events.TypeGrantCreated
		if id.Revoked {
			typ = events.TypeGrantRevoked
		}
		i, subject = 1, subjectOf(BucketGrants, GrantKey(tenant, id.Grant))
		match = func(h nats.Header) bool { return h.Get("ce-type") == typ }
	}
	var c ChangeCursor
	m, err := s.findWrite(ctx, buckets[i], subject, match)
	if err != nil {
		return c, Change{}, err
	}
	c.starts[i].seq = m.Sequence + 1
	c.starts[1-i].at = m.Time.Add(-ResumeSkew)
	return c, Change{Header: m.Header, Data: m.Data}, nil
}

// findWrite walks the stored writes of one key, oldest first (a request
// keeps at most requestHistory), for the first that match accepts.
func (s *Store) findWrite(ctx context.Context, bucket, subject string, match func(nats.Header) bool) (*jetstream.RawStreamMsg, error) {
	st, err := s.js.Stream(ctx, StreamOf(bucket))
	if err != nil {
		return nil, mapErr(err)
	}
	for seq := uint64(1); ; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if err != nil {
			return nil, mapErr(err)
		}
		if m.Header.Get("ce-type") != "" && match(m.Header) {
			return m, nil
		}
		seq = m.Sequence + 1
	}
}

// Changes calls fn with each change of tenant from cur, until ctx ends
// (nil) or fn or a stream fails (that error). Each stream is delivered in
// its order and the two interleave as their writes arrive; fn is called
// from one goroutine. Writes without an event (delete and purge markers)
// are skipped. A NATS restart only pauses delivery: the streams are
// durable, and each reader resumes after the last write it delivered.
func (s *Store) Changes(ctx context.Context, tenant domain.TenantID, cur ChangeCursor, fn func(Change) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan jetstream.Msg)
	buckets := s.changeBuckets(tenant)
	errc := make(chan error, len(buckets))
	for i, b := range buckets {
		it, err := s.changeReader(ctx, b, tenant, cur.starts[i])
		if err != nil {
			return err
		}
		defer it.Stop()
		go func() { errc <- forward(ctx, it, out) }()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return mapErr(err)
		case m := <-out:
			if m.Headers().Get("ce-type") == "" {
				continue
			}
			if err := fn(Change{Header: m.Headers(), Data: m.Data()}); err != nil {
				return err
			}
		}
	}
}

func (s *Store) changeReader(ctx context.Context, bucket string, tenant domain.TenantID, from changeStart) (jetstream.MessagesContext, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subjectOf(bucket, string(tenant)+".>")},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from.seq}
	if from.seq == 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, 0, &from.at
	}
	cons, err := s.js.OrderedConsumer(ctx, StreamOf(bucket), cfg)
	if err != nil {
		return nil, mapErr(err)
	}
	it, err := cons.Messages()
	return it, mapErr(err)
}

// forward sends the iterator's messages to out until it fails or ctx ends.
func forward(ctx context.Context, it jetstream.MessagesContext, out chan<- jetstream.Msg) error {
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case out <- m:
		case <-ctx.Done():
			return nil
		}
	}
}
