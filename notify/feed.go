package notify

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// feed delivers the events of one state stream (requests or grants) of
// one tenant to one endpoint.
type feed struct {
	w       *Worker
	ep      *Endpoint
	stream  string // KV_requests or KV_grants
	subject string // that tenant's writes in it
	key     string // progress key in the bucket
	client  *http.Client
	log     *slog.Logger

	mu    sync.Mutex
	lanes map[string][]*item // per request or grant, ascending revision; head in flight
	held  map[*item]bool     // undelivered, for the oldest-age gauge
}

// run delivers while it holds the feed's lease; it returns when ctx ends
// or the lease is lost, after the items in flight stopped.
func (f *feed) run(ctx context.Context) error {
	l := &lease{kv: f.w.kv, key: f.key + ".lease", holder: f.w.holder, ttl: f.w.tuning.LeaseTTL, clock: f.w.cfg.Clock}
	if err := l.acquire(ctx); err != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go l.hold(ctx, cancel)
	f.mu.Lock()
	f.lanes, f.held = map[string][]*item{}, map[*item]bool{}
	f.mu.Unlock()
	tr, start, err := f.load(ctx)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	saved := saver(ctx, &wg, func(ctx context.Context) { f.save(ctx, tr) })
	err = f.read(ctx, start, tr, saved, &wg)
	cancel()
	wg.Wait()
	f.save(context.WithoutCancel(ctx), tr)
	return err
}

// load reads the stored progress; a new endpoint starts at the stream's
// end (it gets the events from now on).
func (f *feed) load(ctx context.Context) (*tracker, uint64, error) {
	e, err := f.w.kv.Get(ctx, f.key)
	if err == nil {
		var p progress
		if jsonErr := json.Unmarshal(e.Value(), &p); jsonErr == nil {
			return newTracker(p), p.Floor + 1, nil
		}
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, err
	}
	st, err := f.w.js.Stream(ctx, f.stream)
	if err != nil {
		return nil, 0, err
	}
	p := progress{Floor: st.CachedInfo().State.LastSeq}
	tr := newTracker(p)
	f.save(ctx, tr)
	return tr, p.Floor + 1, nil
}

// read takes the tenant's writes in stream order from start: events the
// endpoint does not want are done at once, the others queue on their
// request's lane. It waits while Window items are undelivered.
func (f *feed) read(ctx context.Context, start uint64, tr *tracker, saved func(), wg *sync.WaitGroup) error {
	cons, err := f.w.js.OrderedConsumer(ctx, f.stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{f.subject},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start})
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); it.Stop() }()
	window := make(chan struct{}, f.w.tuning.Window)
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		meta, err := m.Metadata()
		if err != nil {
			continue
		}
		if !tr.read(meta.Sequence.Stream) {
			saved()
			continue
		}
		x, ok := newItem(meta.Sequence.Stream, m.Subject(), m.Headers(), m.Data())
		if !ok || !f.ep.wants(x.typ) {
			tr.markDone(meta.Sequence.Stream)
			saved()
			continue
		}
		select {
		case window <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		x.done = func() { <-window; tr.markDone(x.seq); saved() }
		f.enqueue(ctx, x, wg)
	}
}

// enqueue puts x on its lane, in revision order, and starts the lane if
// it was idle.
func (f *feed) enqueue(ctx context.Context, x *item, wg *sync.WaitGroup) {
	f.mu.Lock()
	q, busy := f.lanes[x.key]
	i, _ := slices.BinarySearchFunc(q, x.rev, func(a *item, rev uint64) int { return cmpU(a.rev, rev) })
	if busy && i == 0 {
		i = 1 // never ahead of the one in flight
	}
	f.lanes[x.key] = slices.Insert(q, i, x)
	f.held[x] = true
	f.mu.Unlock()
	if !busy {
		wg.Add(1)
		go func() { defer wg.Done(); f.drain(ctx, x.key) }()
	}
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// drain delivers a lane's items one at a time until it is empty or ctx
// ends (the items left are read again from the stored progress).
func (f *feed) drain(ctx context.Context, key string) {
	for {
		f.mu.Lock()
		q := f.lanes[key]
		if len(q) == 0 {
			delete(f.lanes, key)
			f.mu.Unlock()
			return
		}
		x := q[0]
		f.mu.Unlock()
		if !f.deliver(ctx, x) {
			return
		}
		f.mu.Lock()
		f.lanes[key] = f.lanes[key][1:]
		delete(f.held, x)
		f.mu.Unlock()
		x.done()
	}
}

// deliver tries x until it is delivered, dropped or ctx ends (false).
func (f *feed) deliver(ctx context.Context, x *item) bool {
	m, t := f.w.metrics, f.w.tuning
	ct, body, err := x.body(f.ep, f.w.links, f.w.cfg.Name)
	if err != nil {
		f.log.Error("webhook event cannot be encoded; dropped", "event", x.id, "err", err)
		m.deliveries.WithLabelValues(outcomeInvalid).Inc()
		return true
	}
	defer f.settle(x)
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, t.Timeout)
		err := post(actx, f.client, f.ep, x, ct, body, t.MaxResponse)
		cancel()
		switch {
		case err == nil:
			m.deliveries.WithLabelValues(outcomeDelivered).Inc()
			return true
		case ctx.Err() != nil:
			return false
		case time.Since(x.at) >= t.MaxAge:
			f.log.Warn("webhook event dropped after retrying", "url", f.ep.URL, "event", x.id, "attempts", n, "err", err)
			m.deliveries.WithLabelValues(outcomeDropped).Inc()
			return true
		}
		m.deliveries.WithLabelValues(outcomeFailed).Inc()
		f.markFailed(x)
		f.log.Debug("webhook attempt failed", "url", f.ep.URL, "event", x.id, "attempt", n, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff(t, n)):
		}
	}
}

func (f *feed) markFailed(x *item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !x.failed {
		x.failed = true
		f.w.metrics.backlog.Inc()
	}
}

// settle takes x out of the retry backlog.
func (f *feed) settle(x *item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if x.failed {
		x.failed = false
		f.w.metrics.backlog.Dec()
	}
}

// oldest is the time of the oldest undelivered event.
func (f *feed) oldest() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var first time.Time
	for x := range f.held {
		if first.IsZero() || x.at.Before(first) {
			first = x.at
		}
	}
	return first, !first.IsZero()
}

func (f *feed) save(ctx context.Context, tr *tracker) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := f.w.kv.Put(ctx, f.key, tr.snapshot()); err != nil && ctx.Err() == nil {
		f.log.Warn("webhook progress not stored", "url", f.ep.URL, "err", err)
	}
}
