package deciders

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go/jetstream"
)

// Worker consumes decider work subjects through the one shared durable
// consumer, so each work message reaches one process. A person's work needs
// nothing here (the request waits in their inbox, and the record already
// says whom it waits on); an agent decider's review is offered to its
// runtimes by Offers. The worker never holds a message while anyone
// thinks: it starts the offers and acks at once.
type Worker struct {
	JS     jetstream.JetStream
	Offers *Offers // nil: no offers (tests of the consumer alone)
	Log    *slog.Logger
}

// Run resumes the offers of reviews pending on agents, consumes until ctx
// ends, then waits for the offers it started. Every
// message is acked at once (offering never fails in a way a redelivery
// would fix); an undecodable payload → TermWithReason.
func (w *Worker) Run(ctx context.Context) error {
	if w.Offers != nil {
		w.Offers.Resume(ctx)
	}
	cons, err := w.JS.CreateOrUpdateConsumer(ctx, events.WorkStream, events.DeciderConsumerConfig())
	if err != nil {
		return fmt.Errorf("deciders: work consumer: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { w.handle(ctx, m) })
	if err != nil {
		return fmt.Errorf("deciders: consume: %w", err)
	}
	<-ctx.Done()
	cc.Drain()
	<-cc.Closed() // no handler runs any more: no offer starts after Wait
	if w.Offers != nil {
		w.Offers.Wait()
	}
	return nil
}

func (w *Worker) handle(ctx context.Context, m jetstream.Msg) {
	var r events.Request
	if err := json.Unmarshal(m.Data(), &r); err != nil {
		_ = m.TermWithReason("undecodable request record")
		return
	}
	if w.Offers != nil {
		w.Offers.Offer(ctx, &r, m.Headers().Get("ce-traceparent"))
	}
	_ = m.Ack()
}
