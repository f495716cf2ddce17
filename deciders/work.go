package deciders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reviewer reviews a request as an agent decider, in the agent's short
// review (SPEC §3), and answers through the same answer path a person
// uses. It returns an error only for a transient failure.
type Reviewer interface {
	Review(ctx context.Context, t *events.Tenant, decider *events.Agent, r *events.Request) error
}

// Worker consumes decider work subjects through the one shared durable
// consumer. A person's work needs nothing here (the request waits in their
// inbox, and the record already says whom it waits on); an agent decider
// whose reviewer is "model" is reviewed by Reviewer. The worker never holds
// a message while anyone thinks: it acks once the review has answered.
type Worker struct {
	JS       jetstream.JetStream
	Views    *kvstate.Views
	Reviewer Reviewer // nil: agents review in their own runtime
	Log      *slog.Logger

	lost atomic.Pointer[error] // why the consumer is not running, nil while it is
}

// Run consumes until ctx ends. Handler nil → Ack; transient error →
// NakWithDelay; undecodable payload → TermWithReason. The work stream
// lives in memory and a NATS restart loses it with the consumer: after
// every reconnect, and whenever the consumer is gone, Run creates it again
// (retrying until the outbox has re-created the stream).
func (w *Worker) Run(ctx context.Context) error {
	nc := w.JS.Conn()
	reconnected := nc.StatusChanged(nats.CONNECTED)
	defer nc.RemoveStatusListener(reconnected)
	wait := 100 * time.Millisecond
	for {
		err := w.consume(ctx, reconnected)
		if ctx.Err() != nil {
			return nil
		}
		if w.lost.Swap(&err) == nil {
			w.Log.Warn("deciders: work consumer lost; creating it again", "err", err)
		}
		if errors.Is(err, errReconnected) {
			wait = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

var errReconnected = errors.New("deciders: NATS reconnected")

// Healthy returns nil while the work consumer runs, or why it does not.
func (w *Worker) Healthy() error {
	if p := w.lost.Load(); p != nil {
		return *p
	}
	return nil
}

// consume runs the shared consumer until ctx ends (nil), the connection
// comes back from a drop, or the consumer is gone.
func (w *Worker) consume(ctx context.Context, reconnected <-chan nats.Status) error {
	for len(reconnected) > 0 { // reconnects before this attempt need no new one
		<-reconnected
	}
	cons, err := w.JS.CreateOrUpdateConsumer(ctx, events.WorkStream, events.DeciderConsumerConfig())
	if err != nil {
		return fmt.Errorf("deciders: work consumer: %w", err)
	}
	gone := make(chan error, 1)
	cc, err := cons.Consume(func(m jetstream.Msg) { w.handle(ctx, m) }, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrNoHeartbeat) {
			select {
			case gone <- err:
			default:
			}
		}
	}))
	if err != nil {
		return fmt.Errorf("deciders: consume: %w", err)
	}
	if w.lost.Swap(nil) != nil {
		w.Log.Info("deciders: work consumer running again")
	}
	select {
	case <-ctx.Done():
		cc.Drain()
		return nil
	case <-reconnected:
		cc.Stop()
		return errReconnected
	case err := <-gone:
		cc.Stop()
		return fmt.Errorf("deciders: work consumer: %w", err)
	}
}

func (w *Worker) handle(ctx context.Context, m jetstream.Msg) {
	var r events.Request
	if err := json.Unmarshal(m.Data(), &r); err != nil {
		_ = m.TermWithReason("undecodable request record")
		return
	}
	if err := w.review(ctx, &r); err != nil {
		w.Log.Warn("decider review failed; redelivering", "request", r.ID, "err", err)
		_ = m.NakWithDelay(5 * time.Second)
		return
	}
	_ = m.Ack()
}

func (w *Worker) review(ctx context.Context, r *events.Request) error {
	if w.Reviewer == nil || r.Approver == nil || r.Approver.Kind != events.KindAgent || r.Status != events.StatusPending {
		return nil
	}
	t, ok := w.Views.Tenant(r.Tenant)
	if !ok {
		return nil
	}
	a, ok := w.Views.Agent(r.Tenant, events.AgentID(r.Approver.ID))
	if !ok || a.Reviewer != "model" {
		return nil
	}
	return w.Reviewer.Review(ctx, t, a, r)
}
