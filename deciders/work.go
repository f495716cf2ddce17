package deciders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	retry "github.com/countersign/countersign/backoff"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Worker consumes agent deciders' work subjects through the one shared
// durable consumer, so each work message reaches one process, and offers
// the review to the agent's runtimes (Offers). A person's or a group's
// work needs nothing here (the request waits in their inbox, and the
// record already says whom it waits on): it goes to a stream no consumer
// reads (events.PeopleWorkStream), and one that still comes (a work
// stream declared by an older process) is acked unread. The worker never
// holds a message while anyone thinks: it starts the offers and acks at
// once.
type Worker struct {
	js     jetstream.JetStream
	offers *Offers
	log    *slog.Logger

	lost atomic.Pointer[error] // why the consumer is not running, nil while it is
}

// WorkerConfig wires a Worker.
type WorkerConfig struct {
	JS jetstream.JetStream
	// Offers, if set, offers reviews to agent deciders' runtimes.
	Offers *Offers
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// NewWorker validates cfg and returns a Worker. Errors: ErrConfig.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.JS == nil {
		return nil, fmt.Errorf("%w: a worker needs JetStream", ErrConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Worker{js: cfg.JS, offers: cfg.Offers, log: cfg.Logger}, nil
}

// Run resumes the offers of reviews pending on agents, then consumes until
// ctx ends and waits for the offers it started. Every message is acked at
// once (offering never fails in a way a redelivery would fix); a person's
// is acked unread, and an agent's undecodable payload → TermWithReason.
// The work stream lives in memory and a NATS restart loses it with the
// consumer: after every reconnect, and whenever the consumer is gone, Run
// creates it again (retrying until the outbox has re-created the stream).
func (w *Worker) Run(ctx context.Context) error {
	if w.offers != nil {
		w.offers.Resume(ctx)
		defer w.offers.Wait()
	}
	nc := w.js.Conn()
	reconnected := nc.StatusChanged(nats.CONNECTED)
	defer nc.RemoveStatusListener(reconnected)
	for n := 1; ; n++ {
		err := w.consume(ctx, reconnected)
		if ctx.Err() != nil {
			return nil
		}
		if w.lost.Swap(&err) == nil {
			w.log.Warn("deciders: work consumer lost; creating it again", "err", err)
		}
		if errors.Is(err, errReconnected) {
			n = 1
		}
		if retry.Sleep(ctx, workRetry.Delay(n)) != nil {
			return nil
		}
	}
}

// workRetry spaces the attempts to create the work consumer again: 100 ms
// doubling to 500 ms, from the first again after each reconnect.
var workRetry = retry.Policy{Base: 100 * time.Millisecond, Max: 500 * time.Millisecond}

var errReconnected = errors.New("deciders: NATS reconnected")

// Healthy returns nil while the work consumer runs, or why it does not.
func (w *Worker) Healthy() error {
	if p := w.lost.Load(); p != nil {
		return *p
	}
	return nil
}

// consume runs the shared consumer until ctx ends (nil), the connection
// comes back from a drop, or the consumer is gone. It returns only once no
// handler runs any more, so no offer starts after Offers.Wait.
func (w *Worker) consume(ctx context.Context, reconnected <-chan nats.Status) error {
	for len(reconnected) > 0 { // reconnects before this attempt need no new one
		<-reconnected
	}
	cons, err := w.js.CreateOrUpdateConsumer(ctx, events.WorkStream, events.DeciderConsumerConfig())
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
		w.log.Info("deciders: work consumer running again")
	}
	select {
	case <-ctx.Done():
		cc.Drain()
		<-cc.Closed()
		return nil
	case <-reconnected:
		cc.Stop()
		<-cc.Closed()
		return errReconnected
	case err := <-gone:
		cc.Stop()
		<-cc.Closed()
		return fmt.Errorf("deciders: work consumer: %w", err)
	}
}

func (w *Worker) handle(ctx context.Context, m jetstream.Msg) {
	if personWork(m.Subject()) { // nothing to do: ack it unread
		_ = m.Ack()
		return
	}
	var r domain.Request
	if err := json.Unmarshal(m.Data(), &r); err != nil {
		_ = m.TermWithReason("undecodable request record")
		return
	}
	if w.offers != nil {
		w.offers.Offer(ctx, &r, m.Headers().Get("ce-traceparent"))
	}
	_ = m.Ack()
}

// personWork reports whether subject is a person's work subject,
// countersign.<tenant>.decide.person.<id> (events.DecideSubject).
func personWork(subject string) bool {
	rest, ok := strings.CutPrefix(subject, events.SubjectRoot+".")
	if !ok {
		return false
	}
	_, rest, _ = strings.Cut(rest, ".")
	return strings.HasPrefix(rest, "decide."+domain.KindPerson+".")
}
