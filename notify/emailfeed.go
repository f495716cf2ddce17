package notify

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/countersign/countersign/domain"
)

// mailFeed reads one tenant's request writes and sends what they ask
// for, one request's writes at a time in order (a lane per request); the
// reminders it owes run beside it.
type mailFeed struct {
	m      *Mailer
	mail   *Mail
	stream string
	key    string // "_progress.<tenant>" in the bucket
	log    *slog.Logger
	smtp   *smtpClient

	mu    sync.Mutex
	lanes map[string][]*item
	locks map[domain.RequestID]*sync.Mutex
	due   map[reminderKey]time.Time // reminders owed, by when
	tries map[reminderKey]int       // failed attempts of a reminder
}

type reminderKey struct {
	Request domain.RequestID
	Member  domain.MemberID
}

func newMailFeed(m *Mailer, ml *Mail) *mailFeed {
	return &mailFeed{m: m, mail: ml, stream: m.requestStream(ml.Tenant), key: "_progress." + string(ml.Tenant),
		log: m.cfg.Logger.With("email", string(ml.Tenant)), smtp: newSMTPClient(ml, m.cfg.Tuning)}
}

// run sends while it holds the tenant's lease; it returns when ctx ends
// or the lease is lost, after the sends in flight stopped.
func (f *mailFeed) run(ctx context.Context) error {
	l := &lease{kv: f.m.kv, key: "_lease." + string(f.mail.Tenant), holder: f.m.holder, ttl: f.m.cfg.Tuning.LeaseTTL, clock: f.m.cfg.Clock}
	if err := l.acquire(ctx); err != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go l.hold(ctx, cancel)
	f.mu.Lock()
	f.lanes, f.locks, f.due, f.tries = map[string][]*item{}, map[domain.RequestID]*sync.Mutex{}, map[reminderKey]time.Time{}, map[reminderKey]int{}
	f.mu.Unlock()
	tr, start, err := f.load(ctx)
	if err != nil {
		return err
	}
	if err := f.loadReminders(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f.remind(ctx) }()
	saved := saver(ctx, &wg, func(ctx context.Context) { f.save(ctx, tr) })
	err = f.read(ctx, start, tr, saved, &wg)
	cancel()
	wg.Wait()
	f.save(context.WithoutCancel(ctx), tr)
	return err
}

// load reads the stored progress; a tenant seen for the first time starts
// at the stream's end.
func (f *mailFeed) load(ctx context.Context) (*tracker, uint64, error) {
	e, err := f.m.kv.Get(ctx, f.key)
	if err == nil {
		var p progress
		if jsonErr := json.Unmarshal(e.Value(), &p); jsonErr == nil {
			return newTracker(p), p.Floor + 1, nil
		}
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, err
	}
	st, err := f.m.cfg.JS.Stream(ctx, f.stream)
	if err != nil {
		return nil, 0, err
	}
	p := progress{Floor: st.CachedInfo().State.LastSeq}
	tr := newTracker(p)
	f.save(ctx, tr)
	return tr, p.Floor + 1, nil
}

// read takes the tenant's request writes in stream order from start and
// queues each on its request's lane.
func (f *mailFeed) read(ctx context.Context, start uint64, tr *tracker, saved func(), wg *sync.WaitGroup) error {
	subject := "$KV." + kvBucketOf(f.stream) + "." + string(f.mail.Tenant) + ".>"
	cons, err := f.m.cfg.JS.OrderedConsumer(ctx, f.stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start})
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); it.Stop() }()
	window := make(chan struct{}, f.m.cfg.Tuning.Window)
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		meta, err := msg.Metadata()
		if err != nil {
			continue
		}
		if !tr.read(meta.Sequence.Stream) {
			saved()
			continue
		}
		x, ok := newItem(meta.Sequence.Stream, msg.Subject(), msg.Headers(), msg.Data())
		if !ok {
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

// kvBucketOf is the bucket of KV stream KV_<bucket>.
func kvBucketOf(stream string) string { return stream[len("KV_"):] }

func (f *mailFeed) enqueue(ctx context.Context, x *item, wg *sync.WaitGroup) {
	f.mu.Lock()
	q, busy := f.lanes[x.key]
	i, _ := slices.BinarySearchFunc(q, x.rev, func(a *item, rev uint64) int { return cmpU(a.rev, rev) })
	if busy && i == 0 {
		i = 1
	}
	f.lanes[x.key] = slices.Insert(q, i, x)
	f.mu.Unlock()
	if !busy {
		wg.Add(1)
		go func() { defer wg.Done(); f.drain(ctx, x.key) }()
	}
}

// drain handles a lane's writes one at a time until it is empty or ctx
// ends (the writes left are read again from the stored progress).
func (f *mailFeed) drain(ctx context.Context, key string) {
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
		if !f.handle(ctx, x) {
			return
		}
		f.mu.Lock()
		f.lanes[key] = f.lanes[key][1:]
		f.mu.Unlock()
		x.done()
	}
}

// lock serializes what is sent about one request (its lane and its
// reminders); the returned func unlocks.
func (f *mailFeed) lock(id domain.RequestID) func() {
	l := f.mutex(id)
	l.Lock()
	return l.Unlock
}

// tryLock is lock when the request is not busy (its lane may be retrying
// for hours); ok is false otherwise.
func (f *mailFeed) tryLock(id domain.RequestID) (unlock func(), ok bool) {
	l := f.mutex(id)
	return l.Unlock, l.TryLock()
}

func (f *mailFeed) mutex(id domain.RequestID) *sync.Mutex {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.locks[id]
	if l == nil {
		l = new(sync.Mutex)
		f.locks[id] = l
	}
	return l
}

func (f *mailFeed) save(ctx context.Context, tr *tracker) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := f.m.kv.Put(ctx, f.key, tr.snapshot()); err != nil && ctx.Err() == nil {
		f.log.Warn("email progress not stored", "err", err)
	}
}
