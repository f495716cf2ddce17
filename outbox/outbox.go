package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/outbox/heal"
	"github.com/countersign/countersign/views"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Consumer is the durable consumer name on each state stream. Its acks
// are explicit: each state message is acked on its own, once its
// republishes are acknowledged, so no process's ack covers another's
// messages not yet republished.
const Consumer = "outbox-explicit"

// LegacyConsumer names a cumulative-ack consumer a state stream may hold.
// When the outbox binds Consumer and finds this one, it starts Consumer
// after its ack floor and deletes it (see consumer); a consumer cannot
// change its ack policy, hence two names.
const LegacyConsumer = "outbox"

// Worker derives the events and work messages from the state streams
// (SPEC §9): every request or grant write carries its CloudEvent in its
// headers; the outbox republishes it on countersign.<tenant>.events.<type>
// and, for created and escalated, on the decider's work subject, with
// Nats-Msg-Id <id>:<revision>. It acks a state message only after the
// streams acknowledged the republish, so a crash redelivers and the dedup
// window drops the repeat: no event lost, none doubled.
//
// A republish that fails is published again in place until it is
// acknowledged, and its state message is acked only then; acks are per
// message, so a message another process (or this one's failed loop) took
// and did not ack is delivered again, never covered by a later ack.
//
// Order: one outbox loop republishes in stream order, but any number of
// processes share the consumer and a message not acked in time is
// delivered again after later ones, so the events of one request may
// reach the events stream out of revision order (never lost, never
// doubled: Nats-Msg-Id dedup). Readers that need order use ce-revision,
// or read the state streams themselves, as the event feed does
// (approvals/events.go). Work messages go to one decider per revision,
// and an answer names the revision it answers, so their order does not
// matter.
//
// The derived streams
// live in memory, so a NATS restart loses them: on every reconnect and
// after every failed republish the outbox re-creates the missing streams
// (Streams) and, when one had to be re-created, re-derives the work
// messages of every pending request. Healthy reports its state for
// readiness.
type Worker struct {
	js      jetstream.JetStream
	store   *kvstate.Store
	views   *views.Views
	grants  Grants
	log     *slog.Logger
	streams *heal.Streams             // the derived streams, healed
	listens func(subject string) bool // Config.Listening
	trouble atomic.Pointer[error]
}

// Grants writes the grants a decided request leaves. RepairGrants is
// called for each request write that carries events.HeaderGrants, in
// case a crash stopped the answer before it wrote them; it is a no-op
// otherwise, safe to repeat, and its error is retried.
// (*approvals.Service).RepairGrants is the one implementation.
type Grants interface {
	RepairGrants(ctx context.Context, r *domain.Request) error
}

// Config wires a Worker.
type Config struct {
	JS     jetstream.JetStream
	Store  *kvstate.Store
	Views  *views.Views
	Grants Grants
	// Streams are the derived streams to keep (events.StreamConfigs).
	Streams []jetstream.StreamConfig
	// Listening reports whether anyone is subscribed to a person's
	// subject; the messages to people (sent at most once) are built only
	// for those who are. Default nil: everyone may be (an external
	// cluster's interest is not seen here).
	Listening func(subject string) bool
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// Validate reports a config New cannot run with: ErrConfig.
func (c Config) Validate() error {
	if c.JS == nil || c.Store == nil || c.Views == nil || c.Grants == nil || len(c.Streams) == 0 {
		return fmt.Errorf("%w: an outbox needs JetStream, the store, the views, the grants and the derived streams", ErrConfig)
	}
	return nil
}

// New validates cfg and returns a Worker. Errors: ErrConfig.
func New(cfg Config) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	o := &Worker{js: cfg.JS, store: cfg.Store, views: cfg.Views, grants: cfg.Grants, log: cfg.Logger, listens: cfg.Listening}
	o.streams = heal.New(cfg.JS, cfg.Streams, o.rederive, cfg.Logger)
	return o, nil
}

// Run republishes until ctx ends. Any number of processes may run it; they
// share the durable consumers. It first re-derives the work messages of
// every pending request (the work stream lives in memory).
func (o *Worker) Run(ctx context.Context) error {
	select {
	case <-o.views.Requests().Ready():
	case <-ctx.Done():
		return nil
	}
	if err := o.streams.Heal(ctx, true); err != nil {
		o.log.Warn("outbox: re-deriving work messages", "err", err)
	}
	go o.followConnection(ctx)
	buckets := append(o.store.RequestBuckets(), kvstate.BucketGrants)
	errc := make(chan error, len(buckets))
	for _, bucket := range buckets {
		// NATS may go away while the outbox starts, as later: bind as
		// keep binds again, retrying until ctx ends, so that a lost
		// connection never ends the worker (and the process with it).
		var cons jetstream.Consumer
		if err := o.retry(ctx, func() (err error) {
			cons, err = o.consumer(ctx, bucket)
			return err
		}); err != nil {
			return nil // ctx ended
		}
		go func() { errc <- o.keep(ctx, bucket, cons) }()
	}
	var err error
	for range buckets {
		if e := <-errc; err == nil {
			err = e
		}
	}
	return err
}

// consumer binds the durable consumer on a state stream, creating it if
// it is missing: after the legacy consumer's ack floor when that one
// exists (which it then deletes; the overlap, messages delivered but not
// acked, is republished again and deduplicated), else from the start.
// Concurrent processes converge on one consumer.
func (o *Worker) consumer(ctx context.Context, bucket string) (jetstream.Consumer, error) {
	stream := kvstate.StreamOf(bucket)
	cons, err := o.js.Consumer(ctx, stream, Consumer)
	if err == nil {
		return cons, nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("outbox: consumer on %s: %w", bucket, err)
	}
	cfg := jetstream.ConsumerConfig{
		Durable: Consumer, AckPolicy: jetstream.AckExplicitPolicy, DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 8192, AckWait: outboxAckWait, Description: "republishes state changes as CloudEvents",
	}
	legacy, err := o.js.Consumer(ctx, stream, LegacyConsumer)
	migrate := err == nil
	switch {
	case migrate:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, legacy.CachedInfo().AckFloor.Stream+1
	case !errors.Is(err, jetstream.ErrConsumerNotFound):
		return nil, fmt.Errorf("outbox: legacy consumer on %s: %w", bucket, err)
	}
	cons, err = o.js.CreateConsumer(ctx, stream, cfg)
	if errors.Is(err, jetstream.ErrConsumerExists) { // another process created it first
		cons, err = o.js.Consumer(ctx, stream, Consumer)
	}
	if err != nil {
		return nil, fmt.Errorf("outbox: consumer on %s: %w", bucket, err)
	}
	if migrate {
		if err := o.js.DeleteConsumer(ctx, stream, LegacyConsumer); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			o.log.Warn("outbox: deleting the legacy consumer", "stream", stream, "err", err)
		} else {
			o.log.Info("outbox: replaced the cumulative-ack consumer", "stream", stream, "from", cfg.OptStartSeq)
		}
	}
	return cons, nil
}

// outboxAckWait is how long a state message delivered to an outbox (in
// any process) waits for its ack before it is delivered again.
const outboxAckWait = 10 * time.Second

type inflight struct {
	src  jetstream.Msg
	acks []jetstream.PubAckFuture
	// people are the messages to people's subjects (people.go), sent
	// once the change's event is stored for the first time and src's ack
	// is confirmed.
	people []*nats.Msg
}

// keep runs loop again after its iterator failed, binding the consumer
// again first: the messages it had not read are redelivered once their
// ack wait passes, and republished (deduplicated).
func (o *Worker) keep(ctx context.Context, bucket string, cons jetstream.Consumer) error {
	for ctx.Err() == nil {
		err := o.loop(ctx, cons)
		if ctx.Err() != nil {
			return nil
		}
		o.log.Warn("outbox: restarting after failure", "err", err)
		_ = o.retry(ctx, func() (err error) {
			cons, err = o.consumer(ctx, bucket)
			return err
		})
	}
	return nil
}

// loop republishes in the order delivered and hands each message to the
// acker, which acks it once its republishes are acknowledged. A message
// this loop never acks (its iterator's buffer when it fails, or a process
// that dies) is delivered again after outboxAckWait, to any process; acks
// are per message, so no other message's ack covers it. loop returns when
// the iterator fails or ctx ends, after the acker has settled everything
// handed to it.
func (o *Worker) loop(ctx context.Context, cons jetstream.Consumer) error {
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		return err
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := make(chan inflight, 4096)
	settled := make(chan struct{})
	go func() { o.acker(ctx, pending); close(settled) }()
	defer func() { close(pending); <-settled }()
	go func() { <-lctx.Done(); it.Stop() }()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		f := inflight{src: m}
		if c, ok := events.PeekChange(m.Headers()); ok { // else a write without an event (e.g. a purge marker): nothing to derive
			if f.acks, err = o.republish(ctx, m, c); err != nil {
				return nil // ctx ended
			}
			f.people = o.peopleMsgs(m.Headers(), m.Data(), c)
		}
		select {
		case pending <- f:
		case <-ctx.Done():
			return nil
		}
	}
}

// acker acks each state message once its republishes are acknowledged,
// publishing again any that failed. It returns when pending closes or ctx
// ends; what it has not acked then is delivered again later.
func (o *Worker) acker(ctx context.Context, pending <-chan inflight) {
	for f := range pending {
		fresh := false // the change's event (its first republish) stored for the first time
		for i, a := range f.acks {
			first, err := o.confirm(ctx, a)
			if err != nil {
				return
			}
			if i == 0 {
				fresh = first
			}
		}
		o.ack(ctx, f, fresh)
	}
}

// ack acks f's state message and then, if its event was stored for the
// first time (fresh) and the ack is confirmed, tells the people it
// concerns: a change delivered again (to this or another process) finds
// its event a duplicate, so no message to a person goes out twice.
func (o *Worker) ack(ctx context.Context, f inflight, fresh bool) {
	if len(f.people) == 0 || !fresh {
		_ = f.src.Ack()
		return
	}
	if f.src.DoubleAck(ctx) != nil {
		return // delivered again later, or lost: at most once
	}
	nc := o.js.Conn()
	for _, m := range f.people {
		_ = nc.PublishMsg(m)
	}
}

// republish publishes the event (and the work message) of change c a
// state message carries; it returns an error only when ctx ends.
func (o *Worker) republish(ctx context.Context, m jetstream.Msg, c events.Change) ([]jetstream.PubAckFuture, error) {
	h := m.Headers()
	typ, tenant := c.Type, c.Tenant
	subjects := []string{events.EventSubject(tenant, typ)}
	if typ != events.TypeGrantCreated && typ != events.TypeGrantRevoked {
		if to, ok := events.ParseWorkTo(h.Get(events.HeaderWorkTo)); ok {
			subjects = append(subjects, events.DecideSubject(tenant, to))
		}
		if h.Get(events.HeaderGrants) != "" {
			if err := o.retry(ctx, func() error { return o.repairGrants(ctx, m.Data()) }); err != nil {
				return nil, err
			}
		}
	}
	acks := make([]jetstream.PubAckFuture, 0, len(subjects))
	first := workMsg(subjects[0], m.Data(), h, c)
	for i, subj := range subjects {
		msg := first
		if i > 0 { // the same headers: no message's are written after
			msg = &nats.Msg{Subject: subj, Data: first.Data, Header: first.Header}
		}
		f, err := o.publishAsync(ctx, msg)
		if err != nil {
			return nil, err
		}
		acks = append(acks, f)
	}
	if h.Get(events.HeaderShadowed) != "" {
		f, err := o.publishAsync(ctx, shadowedMsg(m.Data(), h, c))
		if err != nil {
			return nil, err
		}
		acks = append(acks, f)
	}
	return acks, nil
}

// shadowedMsg is the request.shadowed event derived from a creation c
// whose record holds shadows (SPEC §16), deduplicated by an id of its own.
func shadowedMsg(data []byte, h nats.Header, c events.Change) *nats.Msg {
	out := &nats.Msg{Subject: events.EventSubject(c.Tenant, events.TypeRequestShadowed), Data: data, Header: make(nats.Header, 12)}
	events.ShadowedHeaders(out.Header, h)
	out.Header[nats.MsgIdHdr] = []string{c.MsgID() + ".shadowed"}
	return out
}

// repairGrants writes the grants a decision leaves, if a crash stopped the
// answer before it wrote them (a no-op otherwise).
func (o *Worker) repairGrants(ctx context.Context, data []byte) error {
	var r domain.Request
	if err := json.Unmarshal(data, &r); err != nil {
		return nil
	}
	return o.grants.RepairGrants(ctx, &r)
}

// rederiveWork republishes the work message of every pending request from
// the stored write of its latest change (the same headers, the same
// Nats-Msg-Id), so work survives a restart of an in-memory work stream.
// It returns once every one is acknowledged, or the first failure.
func (o *Worker) rederiveWork(ctx context.Context) error {
	var pending []kvstate.Record
	o.views.Requests().Each(func(_ string, r kvstate.Record) {
		if r.Status == domain.StatusPending && r.Approver != nil {
			pending = append(pending, r)
		}
	})
	acks := make([]jetstream.PubAckFuture, 0, len(pending))
	for _, r := range pending {
		m, err := o.store.LastWrite(ctx, r.Tenant, r.ID)
		if err != nil {
			return err
		}
		// Subject, data and id all come from the one stored write: the
		// mirror may lag behind it (a change stored meanwhile), and its
		// approver is then not the write's.
		to, ok := events.ParseWorkTo(m.Header.Get(events.HeaderWorkTo))
		if !ok {
			continue // the latest change sends no work (it decided the request)
		}
		c, ok := events.PeekChange(m.Header)
		if !ok {
			continue // a write without a readable event derives nothing (as in republish)
		}
		f, err := o.js.PublishMsgAsync(workMsg(events.DecideSubject(r.Tenant, to), m.Data, m.Header, c))
		if err != nil {
			return err
		}
		acks = append(acks, f)
	}
	for _, a := range acks {
		if err := awaitAck(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// workMsg writes a stored change c, its CloudEvent headers copied as
// they are from its stored headers h, and its data to subj, deduplicated
// by the change's Nats-Msg-Id.
func workMsg(subj string, data []byte, h nats.Header, c events.Change) *nats.Msg {
	out := &nats.Msg{Subject: subj, Data: data, Header: make(nats.Header, 12)}
	events.CopyEventHeaders(out.Header, h)
	out.Header[nats.MsgIdHdr] = []string{c.MsgID()}
	return out
}
