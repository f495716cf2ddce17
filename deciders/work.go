package deciders

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
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
}

// Run consumes until ctx ends. Handler nil → Ack; transient error →
// NakWithDelay; undecodable payload → TermWithReason.
func (w *Worker) Run(ctx context.Context) error {
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
	return nil
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
