package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// Bucket keeps each feed's progress and lease.
const Bucket = "webhooks"

// sourceBuckets are the state buckets whose writes carry tenant's events,
// as kvstate names them: its requests shard's and the grants'.
func sourceBuckets(tenant domain.TenantID, shards int) []string {
	return []string{kvstate.RequestBucket(kvstate.ShardOf(tenant, shards)), kvstate.BucketGrants}
}

// BucketConfig declares the progress bucket.
func BucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: Bucket, Description: "webhook delivery progress and leases, one key per endpoint and stream",
		History: 1, Storage: jetstream.FileStorage, Replicas: replicas}
}

// Worker delivers every configured endpoint's events. Run it in the
// deciders role; it never touches the decision path.
type Worker struct {
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	eps     []Endpoint
	links   *Links
	tuning  Tuning
	metrics *metrics
	log     *slog.Logger
	holder  string
	cfg     Config
	feeds   []*feed
}

// New validates cfg and builds a Worker. Errors: ErrConfig.
func New(cfg Config) (*Worker, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Worker{js: cfg.JS, eps: cfg.Endpoints, links: cfg.Links, tuning: cfg.Tuning, metrics: newMetrics(cfg.Registry),
		log: cfg.Logger, holder: string(domain.NewEventID()), cfg: cfg}, nil
}

// Run delivers until ctx ends (nil). A feed that fails (NATS unreachable)
// starts again after a pause; it never stops the others.
func (w *Worker) Run(ctx context.Context) error {
	if len(w.eps) == 0 {
		<-ctx.Done()
		return nil
	}
	if w.kv == nil {
		if err := w.Prepare(ctx); err != nil {
			return err
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, f := range w.feeds {
		g.Go(func() error { w.keep(ctx, f); return nil })
	}
	return g.Wait()
}

// Prepare binds the progress bucket and stores where an endpoint seen for
// the first time starts: after the last write stored now, so that it gets
// every event from the moment Prepare returns. Run calls it when it was
// not called.
func (w *Worker) Prepare(ctx context.Context) error {
	kv, err := w.bucket(ctx)
	if err != nil {
		return err
	}
	w.kv = kv
	w.feeds = nil
	for i := range w.eps {
		for _, b := range sourceBuckets(w.eps[i].Tenant, w.cfg.Shards) {
			f := w.feed(&w.eps[i], kvstate.StreamOf(b), "$KV."+b+".")
			if _, _, err := f.load(ctx); err != nil {
				return fmt.Errorf("notify: %s: %w", w.eps[i].URL, err)
			}
			w.feeds = append(w.feeds, f)
		}
	}
	return nil
}

func (w *Worker) feed(ep *Endpoint, stream, prefix string) *feed {
	f := &feed{w: w, ep: ep, stream: stream, subject: prefix + string(ep.Tenant) + ".>",
		key: ep.id() + "." + stream, client: newClient(w.tuning), log: w.log.With("webhook", ep.URL)}
	w.metrics.add(f)
	return f
}

// keep runs f again and again until ctx ends.
func (w *Worker) keep(ctx context.Context, f *feed) {
	for ctx.Err() == nil {
		if err := f.run(ctx); err != nil && ctx.Err() == nil {
			f.log.Warn("webhook feed stopped; starting again", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// bucket binds the progress bucket, creating it when missing.
func (w *Worker) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var kv jetstream.KeyValue
		if kv, err = w.js.KeyValue(ctx, Bucket); err == nil {
			return kv, nil
		}
		if kv, err = w.js.CreateKeyValue(ctx, BucketConfig(w.cfg.Replicas)); err == nil || errors.Is(err, jetstream.ErrBucketExists) {
			if err == nil {
				return kv, nil
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("notify: bucket %s: %w", Bucket, err)
}
