package kvstate

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pageBatch is how many stored writes one fetch of ChangesAt reads.
const pageBatch = 256

// pageConsumerIdle is how soon the server removes a page's ephemeral
// consumer once it is no longer read (nats.go's default keeps it 5
// minutes: many pages would pile up consumers).
const pageConsumerIdle = 5 * time.Second

// ChangesAt calls fn with each stored request change of tenant from the
// write of change id on, that write first, in the order they were stored,
// until fn returns false or the writes stored so far are all read. It
// reads the requests stream itself, which is durable and shared by every
// process, so a position found before a restart is found after it. It
// returns ErrNotFound if that write is not stored (never made, a grant's
// change, or removed with its request after the retention, or dropped
// from the key's history).
func (s *Store) ChangesAt(ctx context.Context, tenant domain.TenantID, id events.ChangeID, fn func(Change) bool) error {
	if id.Request == "" {
		return ErrNotFound
	}
	rev := strconv.FormatUint(id.Revision, 10)
	bucket := s.RequestBucketOf(tenant)
	m, err := s.findWrite(ctx, bucket, subjectOf(bucket, RequestKey(tenant, id.Request)),
		func(h nats.Header) bool { return h.Get("ce-revision") == rev })
	if err != nil {
		return err
	}
	cons, err := s.js.OrderedConsumer(ctx, StreamOf(bucket), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjectOf(bucket, string(tenant)+".>")},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy, OptStartSeq: m.Sequence,
		InactiveThreshold: pageConsumerIdle})
	if err != nil {
		return mapErr(err)
	}
	for {
		batch, err := cons.Fetch(pageBatch, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return mapErr(err)
		}
		n, last := 0, false
		for msg := range batch.Messages() {
			n++
			meta, err := msg.Metadata()
			last = err != nil || meta.NumPending == 0
			if msg.Headers().Get("ce-type") != "" && !fn(Change{Header: msg.Headers(), Data: msg.Data()}) {
				return nil
			}
			if last {
				return nil
			}
		}
		if n == 0 { // nothing more within the wait: the end
			if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
				return mapErr(err)
			}
			return nil
		}
	}
}
