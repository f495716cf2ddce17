package views

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"golang.org/x/sync/errgroup"
)

// RequestMirror mirrors the request records: one Mirror per request
// shard (see kvstate's shards.go), each with its own watcher and
// snapshots. A tenant's requests are all in one shard, so every lookup,
// index and scan is one shard's; only Each, OnChange and the readiness
// span them all.
type RequestMirror struct {
	shards []*Mirror[kvstate.Record]
	ready  chan struct{}
	once   sync.Once
}

func newRequestMirror(shards []*Mirror[kvstate.Record]) *RequestMirror {
	return &RequestMirror{shards: shards, ready: make(chan struct{})}
}

// of is tenant's shard.
func (r *RequestMirror) of(tenant domain.TenantID) *Mirror[kvstate.Record] {
	return r.shards[kvstate.ShardOf(tenant, len(r.shards))]
}

// ofKey is the shard of a key <tenant>.<request id>.
func (r *RequestMirror) ofKey(key string) *Mirror[kvstate.Record] {
	t, _, _ := strings.Cut(key, ".")
	return r.of(domain.TenantID(t))
}

// Shard is shard i's mirror.
func (r *RequestMirror) Shard(i int) *Mirror[kvstate.Record] { return r.shards[i] }

// Get returns key's record (see Mirror.Get).
func (r *RequestMirror) Get(key string) (kvstate.Record, bool) { return r.ofKey(key).Get(key) }

// GetPtr returns key's record held in full (see Mirror.GetPtr).
func (r *RequestMirror) GetPtr(key string) (*kvstate.Record, bool) { return r.ofKey(key).GetPtr(key) }

// Held returns key's summary and revision (see Mirror.Held).
func (r *RequestMirror) Held(key string) (Summary, uint64, bool) { return r.ofKey(key).Held(key) }

// Apply records rec as key's record at revision rev (see Mirror.Apply).
func (r *RequestMirror) Apply(key string, rec kvstate.Record, rev uint64) {
	r.ofKey(key).Apply(key, rec, rev)
}

// Len is how many requests the mirror holds.
func (r *RequestMirror) Len() int {
	n := 0
	for _, m := range r.shards {
		n += m.Len()
	}
	return n
}

// Each calls fn with every record held in full, shard by shard.
func (r *RequestMirror) Each(fn func(key string, rec kvstate.Record)) {
	for _, m := range r.shards {
		m.Each(fn)
	}
}

// OnChange registers fn with every shard (see Mirror.OnChange).
func (r *RequestMirror) OnChange(fn func(key string, rec kvstate.Record, deleted bool)) {
	for _, m := range r.shards {
		m.OnChange(fn)
	}
}

// Ready is closed once every shard's mirror is (see Mirror.Ready).
func (r *RequestMirror) Ready() <-chan struct{} { return r.ready }

// Err is why a shard's Run ended before it caught up (see Mirror.Err).
func (r *RequestMirror) Err() error {
	for _, m := range r.shards {
		if err := m.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Current reports whether every shard's watcher is current.
func (r *RequestMirror) Current() bool {
	for _, m := range r.shards {
		if !m.Current() {
			return false
		}
	}
	return true
}

// Stale marks every shard not current.
func (r *RequestMirror) Stale() {
	for _, m := range r.shards {
		m.Stale()
	}
}

// Restart restarts every shard's watcher.
func (r *RequestMirror) Restart() {
	for _, m := range r.shards {
		m.Restart()
	}
}

// Run runs every shard's watcher until ctx ends (see Mirror.Run).
func (r *RequestMirror) Run(ctx context.Context) error {
	go r.once.Do(func() { // each shard's Run below closes its Ready, caught up or not
		for _, m := range r.shards {
			<-m.Ready()
		}
		close(r.ready)
	})
	g, gctx := errgroup.WithContext(ctx)
	for _, m := range r.shards {
		g.Go(func() error { return m.Run(gctx) })
	}
	return g.Wait()
}

// RequestSnapshots keeps every request shard's snapshots.
type RequestSnapshots struct {
	shards []*Snapshots[kvstate.Record]
}

// Save saves every shard's snapshot (see Snapshots.Save).
func (s *RequestSnapshots) Save(ctx context.Context) error {
	var errs []error
	for _, sh := range s.shards {
		errs = append(errs, sh.Save(ctx))
	}
	return errors.Join(errs...)
}

// CatchUp waits until every shard's watcher has delivered what its stream
// held when it was called, or until ctx ends (see Snapshots.CatchUp).
func (s *RequestSnapshots) CatchUp(ctx context.Context) error {
	for _, sh := range s.shards {
		if err := sh.CatchUp(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Resumed is the least stream sequence a shard's watcher started from
// after loading its snapshot, or 0 when a shard used none (a replay).
func (s *RequestSnapshots) Resumed() uint64 {
	least := s.shards[0].Resumed()
	for _, sh := range s.shards[1:] {
		least = min(least, sh.Resumed())
	}
	return least
}

// Keep saves every shard's snapshot at each interval every until ctx ends.
func (s *RequestSnapshots) Keep(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, sh := range s.shards {
				if err := sh.Save(ctx); err != nil && ctx.Err() == nil {
					sh.log("snapshot: not saved", "name", sh.store.Name(), "err", err)
				}
			}
		}
	}
}
