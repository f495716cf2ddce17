package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// OutboxConsumer is the durable consumer name on each state stream.
const OutboxConsumer = "outbox"

// Outbox derives the events and work messages from the state streams
// (SPEC §9): every request or grant write carries its CloudEvent in its
// headers; the outbox republishes it on countersign.<tenant>.events.<type>
// and, for created and escalated, on the decider's work subject, with
// Nats-Msg-Id <id>:<revision>. It acks a state message only after the
// streams acknowledged the republish, so a crash redelivers and the dedup
// window drops the repeat: no event lost, none doubled.
type Outbox struct {
	JS      jetstream.JetStream
	Service *Service
	Log     *slog.Logger
}

// Run republishes until ctx ends. Any number of processes may run it; they
// share the durable consumers. It first re-derives the work messages of
// every pending request (the work stream lives in memory).
func (o *Outbox) Run(ctx context.Context) error {
	select {
	case <-o.Service.views.Requests().Ready():
	case <-ctx.Done():
		return nil
	}
	if err := o.rederiveWork(ctx); err != nil {
		o.Log.Warn("outbox: re-deriving work messages", "err", err)
	}
	errc := make(chan error, 2)
	for _, bucket := range []string{kvstate.BucketRequests, kvstate.BucketGrants} {
		cons, err := o.JS.CreateOrUpdateConsumer(ctx, kvstate.StreamOf(bucket), jetstream.ConsumerConfig{
			Durable: OutboxConsumer, AckPolicy: jetstream.AckAllPolicy, DeliverPolicy: jetstream.DeliverAllPolicy,
			MaxAckPending: 8192, AckWait: 10 * time.Second, Description: "republishes state changes as CloudEvents",
		})
		if err != nil {
			return fmt.Errorf("approvals: outbox consumer on %s: %w", bucket, err)
		}
		go func() { errc <- o.keep(ctx, cons) }()
	}
	err := <-errc
	if err2 := <-errc; err == nil {
		err = err2
	}
	return err
}

type inflight struct {
	src  jetstream.Msg
	acks []jetstream.PubAckFuture
}

// keep runs loop again after a failure: the messages it had not acked are
// redelivered once their ack wait passes, and republished (deduplicated).
func (o *Outbox) keep(ctx context.Context, cons jetstream.Consumer) error {
	for ctx.Err() == nil {
		if err := o.loop(ctx, cons); err != nil && ctx.Err() == nil {
			o.Log.Warn("outbox: restarting after failure", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}

// loop republishes in order and hands each message to the acker; it stops
// at the first failure (acking past a failed message would lose it, since
// acks are cumulative).
func (o *Outbox) loop(ctx context.Context, cons jetstream.Consumer) error {
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		return err
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := make(chan inflight, 4096)
	failed := make(chan error, 1)
	go func() { failed <- o.acker(lctx, pending) }()
	go func() { <-lctx.Done(); it.Stop() }()
	for {
		m, err := it.Next()
		if err != nil {
			close(pending)
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return <-failed
			}
			return err
		}
		acks, err := o.republish(ctx, m)
		if err != nil {
			close(pending)
			return err
		}
		select {
		case pending <- inflight{src: m, acks: acks}:
		case err := <-failed:
			return err
		}
	}
}

// acker acks each state message once its republishes are acknowledged;
// with AckAll it acks only when it has caught up (or every 256). It returns
// at the first republish that failed, or when pending closes.
func (o *Outbox) acker(ctx context.Context, pending <-chan inflight) error {
	n := 0
	for f := range pending {
		for _, a := range f.acks {
			select {
			case <-a.Ok():
			case err := <-a.Err():
				return fmt.Errorf("publish not acknowledged: %w", err)
			case <-ctx.Done():
				return nil
			}
		}
		if n++; len(pending) == 0 || n%256 == 0 {
			_ = f.src.Ack()
		}
	}
	return nil
}

func (o *Outbox) republish(ctx context.Context, m jetstream.Msg) ([]jetstream.PubAckFuture, error) {
	h := m.Headers()
	typ, subject, tenant := h.Get("ce-type"), h.Get("ce-subject"), events.TenantID(h.Get("ce-tenant"))
	if typ == "" || subject == "" || tenant == "" {
		return nil, nil // a write without an event (e.g. a purge marker): nothing to derive
	}
	msgID := subject + ":" + h.Get("ce-revision")
	subjects := []string{events.EventSubject(tenant, typ)}
	switch typ {
	case events.TypeGrantCreated, events.TypeGrantRevoked:
		msgID = events.GrantMsgID(events.GrantID(subject), typ == events.TypeGrantRevoked)
	default:
		if to, ok := events.ParseWorkTo(h.Get(events.HeaderWorkTo)); ok {
			subjects = append(subjects, events.DecideSubject(tenant, to))
		}
		if h.Get(events.HeaderGrants) != "" {
			if err := o.repairGrants(ctx, m.Data()); err != nil {
				return nil, err
			}
		}
	}
	acks := make([]jetstream.PubAckFuture, 0, len(subjects))
	for _, subj := range subjects {
		f, err := o.JS.PublishMsgAsync(workMsg(subj, m.Data(), h, msgID))
		if err != nil {
			return nil, err
		}
		acks = append(acks, f)
	}
	return acks, nil
}

// repairGrants writes the grants a decision leaves, if a crash stopped the
// answer before it wrote them (a no-op otherwise).
func (o *Outbox) repairGrants(ctx context.Context, data []byte) error {
	var r events.Request
	if err := json.Unmarshal(data, &r); err != nil {
		return nil
	}
	return o.Service.ensureGrants(ctx, &r)
}

// rederiveWork republishes the work message of every pending request from
// the stored write of its latest change (the same headers, the same
// Nats-Msg-Id), so work survives a restart of an in-memory work stream.
func (o *Outbox) rederiveWork(ctx context.Context) error {
	var pending []kvstate.Record
	o.Service.views.Requests().Each(func(_ string, r kvstate.Record) {
		if r.Status == events.StatusPending && r.Approver != nil {
			pending = append(pending, r)
		}
	})
	for _, r := range pending {
		m, err := o.Service.store.LastWrite(ctx, r.Tenant, r.ID)
		if err != nil {
			return err
		}
		out := workMsg(events.DecideSubject(r.Tenant, *r.Approver), m.Data, m.Header, events.MsgID(r.ID, r.Revision))
		if _, err := o.JS.PublishMsgAsync(out); err != nil {
			return err
		}
	}
	return nil
}

// workMsg copies a stored change's CloudEvent (headers and data) to subj
// with the dedup id msgID.
func workMsg(subj string, data []byte, h nats.Header, msgID string) *nats.Msg {
	out := &nats.Msg{Subject: subj, Data: data, Header: nats.Header{}}
	for k, v := range h {
		if strings.HasPrefix(k, "ce-") || k == "Content-Type" {
			out.Header[k] = v
		}
	}
	out.Header.Set(nats.MsgIdHdr, msgID)
	return out
}
