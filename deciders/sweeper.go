package deciders

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// Sweeper removes terminal requests past their tenant's request_retention
// (SPEC §9), driven by the requests' stored writes rather than a scan or a
// timer per record: for each tenant that does not keep its records, it
// reads the tenant's writes in stream order (an ordered consumer from the
// oldest still stored), and at a write that left its request terminal it
// waits until that request is due, then removes it if that write is still
// its latest. Writes are stored in the order requests ended, and one
// tenant has one retention, so the wait at the head of the stream is the
// only one; it holds nothing per record. Every process sweeps; a removal
// is guarded by the record's KV revision, so a second one does nothing.
type Sweeper struct {
	js      jetstream.JetStream
	tenants []*events.Tenant
	acts    TimeActions
	clock   Clock
	log     *slog.Logger
}

// SweeperConfig wires a Sweeper.
type SweeperConfig struct {
	JS      jetstream.JetStream
	Tenants []*events.Tenant
	Act     TimeActions
	// Clock is the time retention runs on. Default SystemClock.
	Clock Clock
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// NewSweeper validates cfg and returns a Sweeper. Errors: ErrConfig.
func NewSweeper(cfg SweeperConfig) (*Sweeper, error) {
	if cfg.JS == nil || cfg.Act == nil {
		return nil, fmt.Errorf("%w: the sweeper needs JetStream and the removal", ErrConfig)
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Sweeper{js: cfg.JS, tenants: cfg.Tenants, acts: cfg.Act, clock: cfg.Clock, log: cfg.Logger}, nil
}

// sweepRetry is the wait before a failed read or removal is tried again.
const sweepRetry = time.Second

// Run sweeps every tenant with a retention until ctx ends.
func (s *Sweeper) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, t := range s.tenants {
		if t.RequestRetention > 0 {
			g.Go(func() error { s.sweep(ctx, t); return nil })
		}
	}
	return g.Wait()
}

// sweep reads one tenant's writes until ctx ends, resuming after the last
// one it handled when the consumer fails.
func (s *Sweeper) sweep(ctx context.Context, t *events.Tenant) {
	next := uint64(1)
	for ctx.Err() == nil {
		if err := s.pass(ctx, t, &next); err != nil && ctx.Err() == nil {
			s.log.Warn("retention sweep failed; retrying", "tenant", t.ID, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(sweepRetry):
			}
		}
	}
}

// ended is what the sweeper reads of a stored request.
type ended struct {
	Status   events.Status `json:"status"`
	Decision *struct {
		DecidedAt time.Time `json:"decided_at"`
	} `json:"decision"`
}

func (s *Sweeper) pass(ctx context.Context, t *events.Tenant, next *uint64) error {
	prefix := kvstate.RequestSubjectPrefix(t.ID)
	cons, err := s.js.OrderedConsumer(ctx, kvstate.StreamOf(kvstate.BucketRequests), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{prefix + ">"}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: *next})
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		m, err := it.Next()
		if err != nil {
			return err
		}
		meta, err := m.Metadata()
		if err != nil {
			return err
		}
		var r ended
		if m.Headers().Get("ce-type") != "" && json.Unmarshal(m.Data(), &r) == nil && r.Status.Terminal() && r.Decision != nil {
			id := events.RequestID(strings.TrimPrefix(m.Subject(), prefix))
			if err := s.remove(ctx, t, id, meta.Sequence.Stream, r.Decision.DecidedAt.Add(t.RequestRetention)); err != nil {
				return err
			}
		}
		*next = meta.Sequence.Stream + 1
	}
}

// remove waits until due, then removes the request if kvRev is still its
// latest write, retrying a failure until ctx ends (its error then).
func (s *Sweeper) remove(ctx context.Context, t *events.Tenant, id events.RequestID, kvRev uint64, due time.Time) error {
	for {
		if wait := due.Sub(s.clock.Now()); wait > 0 {
			fired := make(chan struct{})
			stop := s.clock.AfterFunc(wait, func() { close(fired) })
			select {
			case <-ctx.Done():
				stop()
				return ctx.Err()
			case <-fired:
			}
		}
		err := s.acts.RemoveRequest(ctx, t.ID, id, kvRev)
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		s.log.Warn("retention removal failed; retrying", "request", id, "err", err)
		due = s.clock.Now().Add(sweepRetry)
	}
}
