package deciders

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/domain"
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
// Revoked grants are swept the same way, from the grants' writes: each is
// removed the tenant's request_retention after it was revoked.
type Sweeper struct {
	js      jetstream.JetStream
	tenants func() []*domain.Tenant
	shards  int
	changed chan struct{}
	acts    TimeActions
	clock   clock.Clock
	log     *slog.Logger
}

// SweeperConfig wires a Sweeper.
type SweeperConfig struct {
	JS jetstream.JetStream
	// Tenants is the running config's tenants, read again after each
	// Reconfigured.
	Tenants func() []*domain.Tenant
	// Shards is request_shards (kvstate's shards.go). Default 1.
	Shards int
	Act    TimeActions
	// Clock is the time retention runs on. Default clock.System.
	Clock clock.Clock
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// NewSweeper validates cfg and returns a Sweeper. Errors: ErrConfig.
func NewSweeper(cfg SweeperConfig) (*Sweeper, error) {
	if cfg.JS == nil || cfg.Act == nil || cfg.Tenants == nil {
		return nil, fmt.Errorf("%w: the sweeper needs JetStream, the tenants and the removal", ErrConfig)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Sweeper{js: cfg.JS, tenants: cfg.Tenants, shards: max(cfg.Shards, 1), changed: make(chan struct{}, 1), acts: cfg.Act, clock: cfg.Clock, log: cfg.Logger}, nil
}

// sweepRetry is the wait before a failed read or removal is tried again.
const sweepRetry = time.Second

// Run sweeps every tenant with a retention until ctx ends: its terminal
// requests, and its revoked grants (removed the same retention after their
// revocation). After Reconfigured it starts again from the running
// tenants: a tenant added is swept, a retention changed is read from the
// stream's start again, the others resume where they were.
func (s *Sweeper) Run(ctx context.Context) error {
	type sweepOf struct {
		tenant    domain.TenantID
		bucket    string
		retention time.Duration
	}
	nexts := map[sweepOf]*uint64{}
	for {
		g, gctx := errgroup.WithContext(ctx)
		gctx, cancel := context.WithCancel(gctx)
		for _, t := range s.tenants() {
			if t.RequestRetention <= 0 {
				continue
			}
			for _, k := range []kind{s.requests(t), s.grants(t)} {
				at := sweepOf{t.ID, k.bucket, t.RequestRetention}
				if nexts[at] == nil {
					nexts[at] = new(uint64)
					*nexts[at] = 1
				}
				next := nexts[at]
				g.Go(func() error { s.sweep(gctx, t, k, next); return nil })
			}
		}
		select {
		case <-ctx.Done():
		case <-s.changed:
		}
		cancel()
		_ = g.Wait()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// Reconfigured has Run start its sweeps again from the running tenants
// (a reload's hook).
func (s *Sweeper) Reconfigured() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// kind is what one sweep follows: a bucket's writes under a tenant's
// prefix, when a write makes its key due for removal (false: never), and
// the removal.
type kind struct {
	bucket, prefix string
	due            func(data []byte) (time.Time, bool)
	remove         func(ctx context.Context, id string, kvRev uint64) error
}

// ended is what the sweeper reads of a stored request.
type ended struct {
	Status   domain.Status `json:"status"`
	Decision *struct {
		DecidedAt time.Time `json:"decided_at"`
	} `json:"decision"`
}

// requests: a write that left its request terminal is due its retention
// after it ended.
func (s *Sweeper) requests(t *domain.Tenant) kind {
	return kind{bucket: kvstate.RequestBucket(kvstate.ShardOf(t.ID, s.shards)), prefix: kvstate.RequestSubjectPrefix(t.ID, s.shards),
		due: func(data []byte) (time.Time, bool) {
			var r ended
			if json.Unmarshal(data, &r) != nil || !r.Status.Terminal() || r.Decision == nil {
				return time.Time{}, false
			}
			return r.Decision.DecidedAt.Add(t.RequestRetention), true
		},
		remove: func(ctx context.Context, id string, kvRev uint64) error {
			return s.acts.RemoveRequest(ctx, t.ID, domain.RequestID(id), kvRev)
		}}
}

// grants: a write that revoked its grant is due the retention after the
// revocation.
func (s *Sweeper) grants(t *domain.Tenant) kind {
	return kind{bucket: kvstate.BucketGrants, prefix: kvstate.GrantSubjectPrefix(t.ID),
		due: func(data []byte) (time.Time, bool) {
			var g struct {
				RevokedAt *time.Time `json:"revoked_at"`
			}
			if json.Unmarshal(data, &g) != nil || g.RevokedAt == nil {
				return time.Time{}, false
			}
			return g.RevokedAt.Add(t.RequestRetention), true
		},
		remove: func(ctx context.Context, id string, kvRev uint64) error {
			return s.acts.RemoveGrant(ctx, t.ID, domain.GrantID(id), kvRev)
		}}
}

// sweep reads one tenant's writes of one kind until ctx ends, resuming
// after the last one it handled when the consumer fails.
func (s *Sweeper) sweep(ctx context.Context, t *domain.Tenant, k kind, next *uint64) {
	for ctx.Err() == nil {
		if err := s.pass(ctx, k, next); err != nil && ctx.Err() == nil {
			s.log.Warn("retention sweep failed; retrying", "tenant", t.ID, "bucket", k.bucket, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(sweepRetry):
			}
		}
	}
}

func (s *Sweeper) pass(ctx context.Context, k kind, next *uint64) error {
	cons, err := s.js.OrderedConsumer(ctx, kvstate.StreamOf(k.bucket), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{k.prefix + ">"}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: *next})
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
		if due, ok := k.due(m.Data()); ok { // a delete or purge marker has no data: never due
			id := strings.TrimPrefix(m.Subject(), k.prefix)
			if err := s.remove(ctx, k, id, meta.Sequence.Stream, due); err != nil {
				return err
			}
		}
		*next = meta.Sequence.Stream + 1
	}
}

// remove waits until due, then removes the key if kvRev is still its
// latest write, retrying a failure until ctx ends (its error then).
func (s *Sweeper) remove(ctx context.Context, k kind, id string, kvRev uint64, due time.Time) error {
	for {
		if !clock.Sleep(ctx, s.clock, due.Sub(s.clock.Now())) {
			return ctx.Err()
		}
		err := k.remove(ctx, id, kvRev)
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		s.log.Warn("retention removal failed; retrying", "bucket", k.bucket, "key", id, "err", err)
		due = s.clock.Now().Add(sweepRetry)
	}
}
