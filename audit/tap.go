package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Tap hands the writer the request and grant writes this process makes,
// as they are acknowledged (kvstate's Store.SetTap calls Offer), so that
// it need not have every one delivered again by a consumer of its own: in
// a person's round trip that delivery cost about as much CPU as all the
// writer's own work (docs/operators/performance.md).
//
// The tap is a shortcut, never the source of truth: the writer still
// projects each source in stream order from its cursor on, and reads
// from the stream whatever the tap did not give it (another process's
// writes, removal markers, writes made while its buffer was full, all
// before a restart): a sequence it has not got within tapGap while a
// later one is held, or one past what it holds when tapIdle passes with
// the stream ahead. So the package doc's guarantees hold whatever the tap
// delivers or drops.
type Tap struct {
	mu   sync.Mutex
	subs map[string]chan sourceMsg // by stream: the pump of that source
}

// NewTap returns a tap that nobody reads yet.
func NewTap() *Tap { return &Tap{subs: map[string]chan sourceMsg{}} }

// tapBuffer is how many writes a source's tap holds for its pump; one
// more is dropped (and read from the stream later).
const tapBuffer = 8192

// tapGap is how long the pump waits for a sequence the tap has not given
// while it holds a later one (acknowledgements of concurrent writes
// arrive out of order), before it reads it from the stream.
const tapGap = 20 * time.Millisecond

// tapIdle is how often the pump looks for writes past the last it got,
// when the tap gives none (another process's writes).
const tapIdle = 250 * time.Millisecond

// Offer is told each write of stream this process made, at stream
// sequence seq, once it is acknowledged: m as published (its header and
// data are not changed after). It never blocks.
func (t *Tap) Offer(stream string, seq uint64, m *nats.Msg) {
	t.mu.Lock()
	ch := t.subs[stream]
	t.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- sourceMsg{seq: seq, subject: m.Subject, header: m.Header, data: m.Data, at: time.Now()}:
	default: // full: the pump reads it from the stream
	}
}

// subscribe makes stream's writes go to the returned channel until the
// returned func is called.
func (t *Tap) subscribe(stream string) (<-chan sourceMsg, func()) {
	ch := make(chan sourceMsg, tapBuffer)
	t.mu.Lock()
	t.subs[stream] = ch
	t.mu.Unlock()
	return ch, func() {
		t.mu.Lock()
		if t.subs[stream] == ch {
			delete(t.subs, stream)
		}
		t.mu.Unlock()
	}
}

// tapped reports whether source src's writes come through a tap.
func tapped(src int) bool { return src == 0 || src == 1 || src >= len(sources) }

// pumpTapped feeds src's messages from stream sequence from on, in order,
// taking them from the tap when it has them and reading the stream for
// the rest.
func (w *Writer) pumpTapped(ctx context.Context, src int, from uint64, out chan<- sourceMsg) error {
	name := sourceName(src)
	st, err := w.cfg.JS.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("audit: source %s: %w", name, err)
	}
	ch, stop := w.cfg.Tap.subscribe(name)
	defer stop()
	next := from
	held := map[uint64]sourceMsg{}
	var since time.Time // when next was first missing with later ones held, or the last look at the stream
	timer := time.NewTimer(tapIdle)
	defer timer.Stop()
	for {
		for m, ok := held[next]; ok; m, ok = held[next] {
			delete(held, next)
			select {
			case out <- m:
			case <-ctx.Done():
				return nil
			}
			next++
			since = time.Time{}
		}
		if since.IsZero() {
			since = time.Now()
		}
		// Wait for next from the tap until a deadline set when it went
		// missing: later writes arriving meanwhile do not move it.
		wait := tapIdle
		if len(held) > 0 {
			wait = tapGap
		}
		if len(held) < tapBuffer {
			timer.Reset(time.Until(since.Add(wait)))
			select {
			case <-ctx.Done():
				return nil
			case m := <-ch:
				if m.seq >= next {
					m.src = src
					held[m.seq] = m
				}
				continue
			case <-timer.C:
			}
		}
		if next, err = w.readGap(ctx, st, src, next, held, out); err != nil {
			return err
		}
		for s := range held {
			if s < next {
				delete(held, s) // read from the stream meanwhile
			}
		}
		since = time.Time{}
	}
}

// readGap reads src's stream from next up to the first sequence held (or
// the stream's end, none held), feeds each stored message and skips those
// removed, and returns the next sequence to feed.
func (w *Writer) readGap(ctx context.Context, st jetstream.Stream, src int, next uint64, held map[uint64]sourceMsg, out chan<- sourceMsg) (uint64, error) {
	until := uint64(0) // the first sequence held: 0 none
	for s := range held {
		if until == 0 || s < until {
			until = s
		}
	}
	if until == 0 {
		info, err := st.Info(ctx)
		if err != nil {
			return next, fmt.Errorf("audit: source %s: %w", sourceName(src), err)
		}
		if info.State.LastSeq < next {
			return next, nil // nothing written since
		}
		until = info.State.LastSeq + 1
	}
	if until-next > maxGapGets { // many: a consumer of their own, while they keep coming
		n, err := w.readRange(ctx, src, next, out)
		if err != nil || n > next {
			return n, err
		}
		// None came (removed since, all of them?): one by one.
	}
	for ; next < until; next++ {
		raw, err := st.GetMsg(ctx, next)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // removed; a consumer skips it too
		}
		if err != nil {
			return next, fmt.Errorf("audit: source %s: %w", sourceName(src), err)
		}
		m := sourceMsg{src: src, seq: raw.Sequence, subject: raw.Subject, header: raw.Header, data: raw.Data, at: raw.Time}
		select {
		case out <- m:
		case <-ctx.Done():
			return next, ctx.Err()
		}
	}
	return next, nil
}

// maxGapGets is the longest gap read message by message; a longer one is
// read through an ordered consumer.
const maxGapGets = 8

// tapRange is the least time the pump reads through a consumer once it
// has had to: where another process writes all the time, the gaps would
// otherwise each cost a consumer (created, and deleted again).
const tapRange = 2 * time.Second

// readRange feeds src's messages from next on through an ordered
// consumer, until it has read every message stored and tapRange has
// passed, or none comes for tapIdle; it returns the next sequence to
// feed.
func (w *Writer) readRange(ctx context.Context, src int, next uint64, out chan<- sourceMsg) (uint64, error) {
	name := sourceName(src)
	cons, err := w.cfg.JS.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: next})
	if err != nil {
		return next, fmt.Errorf("audit: source %s: %w", name, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return next, fmt.Errorf("audit: source %s: %w", name, err)
	}
	defer func() {
		it.Stop()
		if info := cons.CachedInfo(); info != nil { // an ordered consumer lingers 5 minutes unless deleted
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultWait)
			_ = w.cfg.JS.DeleteConsumer(dctx, name, info.Name)
			cancel()
		}
	}()
	start := time.Now()
	for {
		m, err := it.Next(jetstream.NextMaxWait(tapIdle))
		if errors.Is(err, nats.ErrTimeout) {
			return next, nil // none stored since: back to the tap
		}
		if err != nil {
			return next, fmt.Errorf("audit: source %s: %w", name, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return next, err
		}
		sm := sourceMsg{src: src, seq: md.Sequence.Stream, subject: m.Subject(), header: m.Headers(), data: m.Data(), at: md.Timestamp}
		if sm.seq < next {
			continue
		}
		select {
		case out <- sm:
		case <-ctx.Done():
			return next, ctx.Err()
		}
		next = sm.seq + 1
		if md.NumPending == 0 && time.Since(start) >= tapRange {
			return next, nil
		}
	}
}
