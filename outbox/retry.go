package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/outbox/heal"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ackWait bounds the wait for one republish's acknowledgement: a publish
// sent to a server that then died is never acknowledged.
const ackWait = heal.Wait

// maxRetryWait caps the pause between attempts to republish or heal.
const maxRetryWait = 500 * time.Millisecond

var (
	errDisconnected = errors.New("outbox: NATS disconnected")
	errAckTimeout   = errors.New("outbox: publish not acknowledged in time")
)

// Healthy returns nil while the outbox works, or the failure it is
// recovering from. It costs no I/O (for /readyz).
func (o *Worker) Healthy() error {
	if p := o.trouble.Load(); p != nil {
		return *p
	}
	return nil
}

func (o *Worker) fail(err error) {
	if o.trouble.Swap(&err) == nil {
		o.log.Warn("outbox: failing; retrying", "err", err)
	}
}

func (o *Worker) recovered() {
	if o.trouble.Swap(nil) != nil {
		o.log.Info("outbox: healed")
	}
}

// followConnection heals the derived streams each time the connection
// comes back (a restarted NATS server has lost the in-memory ones).
func (o *Worker) followConnection(ctx context.Context) {
	nc := o.js.Conn()
	status := nc.StatusChanged(nats.CONNECTED, nats.DISCONNECTED, nats.RECONNECTING)
	defer nc.RemoveStatusListener(status)
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-status:
			if s != nats.CONNECTED {
				if !nc.IsConnected() { // not a drop that is already over
					o.fail(errDisconnected)
				}
				continue
			}
			_ = o.retry(ctx, func() error { return o.streams.Heal(ctx, false) })
		}
	}
}

// rederive re-derives the pending requests' work, after a derived stream
// was re-created (heal.Streams.Heal); only from a current mirror.
func (o *Worker) rederive(ctx context.Context) error {
	if !o.views.Requests().Current() {
		return fmt.Errorf("outbox: %w: %s", kvstate.ErrStale, kvstate.BucketRequests)
	}
	return o.rederiveWork(ctx)
}

// retry runs op until it succeeds; it returns an error only when ctx ends.
func (o *Worker) retry(ctx context.Context, op func() error) error {
	wait := 100 * time.Millisecond
	for {
		err := op()
		if err == nil {
			o.recovered()
			return nil
		}
		o.fail(err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, maxRetryWait)
	}
}

// publishAsync starts a republish, retrying (and healing the streams)
// until NATS takes it; it returns an error only when ctx ends.
func (o *Worker) publishAsync(ctx context.Context, m *nats.Msg) (jetstream.PubAckFuture, error) {
	var f jetstream.PubAckFuture
	err := o.retry(ctx, func() (err error) {
		if f, err = o.js.PublishMsgAsync(m); err != nil {
			_ = o.streams.Heal(ctx, false)
		}
		return err
	})
	return f, err
}

// confirm waits for a republish's acknowledgement and, if it fails or does
// not come, publishes the message again (healing the streams between
// attempts) until one is acknowledged. It returns an error only when ctx
// ends, and reports whether the message was stored for the first time (not
// a duplicate of one stored before).
func (o *Worker) confirm(ctx context.Context, a jetstream.PubAckFuture) (bool, error) {
	ack, err := awaitPubAck(ctx, a)
	if err == nil || ctx.Err() != nil {
		return err == nil && !ack.Duplicate, ctx.Err()
	}
	o.fail(err)
	first := false
	return first, o.retry(ctx, func() error {
		if err := o.streams.Heal(ctx, false); err != nil {
			return err
		}
		ack, err := o.js.PublishMsg(ctx, a.Msg())
		first = err == nil && !ack.Duplicate
		return err
	})
}

// awaitAck waits up to ackWait for a's acknowledgement.
func awaitAck(ctx context.Context, a jetstream.PubAckFuture) error {
	_, err := awaitPubAck(ctx, a)
	return err
}

// awaitPubAck is awaitAck returning the acknowledgement.
func awaitPubAck(ctx context.Context, a jetstream.PubAckFuture) (*jetstream.PubAck, error) {
	select { // most have come by the time the acker looks: no timer then
	case ack := <-a.Ok():
		return ack, nil
	default:
	}
	t := time.NewTimer(ackWait)
	defer t.Stop()
	select {
	case ack := <-a.Ok():
		return ack, nil
	case err := <-a.Err():
		return nil, fmt.Errorf("outbox: publish not acknowledged: %w", err)
	case <-t.C:
		return nil, errAckTimeout
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
