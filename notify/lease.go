package notify

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/countersign/countersign/clock"
)

// lease lets one process at a time deliver a feed: a bucket entry naming
// its holder until a time, taken by create or by a compare-and-set on an
// expired entry, and renewed by compare-and-set.
type lease struct {
	kv     jetstream.KeyValue
	key    string
	holder string
	ttl    time.Duration
	clock  clock.Clock
	rev    uint64
}

type leaseValue struct {
	Holder string    `json:"holder"`
	Until  time.Time `json:"until"`
}

func (l *lease) value() []byte {
	b, _ := json.Marshal(leaseValue{Holder: l.holder, Until: l.clock.Now().Add(l.ttl)})
	return b
}

// acquire waits until it holds the lease or ctx ends.
func (l *lease) acquire(ctx context.Context) error {
	for {
		if l.try(ctx) {
			return nil
		}
		if !clock.Sleep(ctx, l.clock, l.ttl/3) {
			return ctx.Err()
		}
	}
}

func (l *lease) try(ctx context.Context) bool {
	e, err := l.kv.Get(ctx, l.key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		l.rev, err = l.kv.Create(ctx, l.key, l.value())
		return err == nil
	}
	if err != nil {
		return false
	}
	var v leaseValue
	if json.Unmarshal(e.Value(), &v) == nil && v.Holder != l.holder && l.clock.Now().Before(v.Until) {
		return false
	}
	l.rev, err = l.kv.Update(ctx, l.key, l.value(), e.Revision())
	return err == nil
}

// hold renews the lease every third of its TTL on the clock until ctx
// ends, then releases it; it calls lost if a renewal fails (another
// process may take the feed).
func (l *lease) hold(ctx context.Context, lost func()) {
	for clock.Sleep(ctx, l.clock, l.ttl/3) {
		rev, err := l.kv.Update(ctx, l.key, l.value(), l.rev)
		if err != nil {
			lost()
			return
		}
		l.rev = rev
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	_ = l.kv.Delete(rctx, l.key, jetstream.LastRevision(l.rev))
	cancel()
}
