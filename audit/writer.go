package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultRetention is a tenant's audit_retention when it sets none.
const DefaultRetention = 400 * 24 * time.Hour

// commitGap is the least time from a commit to the next, unless a batch
// fills first: a batch costs the server a staging store of its own and
// a write for each tenant's entries, tree and the cursor, whatever its
// size, so under load few large batches cost far less than many small
// ones (BenchmarkCommit; the figures are in docs/operators/performance.md).
// An entry waits for it only when the one before it was committed less
// than commitGap earlier.
const commitGap = 250 * time.Millisecond

// maxChanges bounds the entries of one atomic batch: its tree messages
// then stay far below the server's payload limit (about two 32-byte
// hashes an entry, 256 KiB at most for one tenant), and its lag short.
// Under load a batch fills before commitGap has passed, and each commit
// costs the server and the writer alike whatever its size, so the bound
// is set high (BenchmarkCommit; the figures are in
// docs/operators/performance.md). A batch is also bounded by its
// messages (take): the server refuses an atomic batch of more than
// maxBatchMsgs. A source message with more changes than fit is split
// across batches.
const maxChanges = 4000

// readAhead bounds the source messages read ahead of the batch being
// gathered (as 4*499 did while batches held 499 changes).
const readAhead = 2048

// errConflict: another writer stored a batch first.
var errConflict = errors.New("audit: another writer moved the cursor")

// WriterConfig wires a Writer.
type WriterConfig struct {
	JS  jetstream.JetStream
	Log *Log
	// ConfigTenants names the tenants a config file's revision applies
	// to. Default: config revisions are not logged.
	ConfigTenants func(raw []byte) []domain.TenantID
	// Shards is request_shards (kvstate's shards.go). Default 1.
	Shards int
	// Retention is a tenant's audit_retention. Default DefaultRetention.
	Retention func(domain.TenantID) time.Duration
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Lag, when set, is told each entry's lag once its batch is stored:
	// from its change's time to the commit (countersign_audit_lag_seconds).
	Lag func(time.Duration)
	// Tap, when set, gives the writer this process's request and grant
	// writes as they are acknowledged (tap.go). Default: every message is
	// read from its stream.
	Tap *Tap
}

// Writer projects the sources into the tenants' logs (see the package
// doc for why it neither skips nor repeats an entry).
type Writer struct {
	cfg     WriterConfig
	mapper  mapper
	gap     time.Duration // commitGap; tests set it
	most    int           // maxChanges; tests set it
	sources int           // how many: sources and the request shards past the first (sourceName)
}

// NewWriter validates cfg. Errors: ErrConfig.
func NewWriter(cfg WriterConfig) (*Writer, error) {
	if cfg.JS == nil || cfg.Log == nil {
		return nil, fmt.Errorf("%w: a writer needs JetStream and the log", ErrConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Retention == nil {
		cfg.Retention = func(domain.TenantID) time.Duration { return DefaultRetention }
	}
	return &Writer{cfg: cfg, mapper: mapper{configTenants: cfg.ConfigTenants}, gap: commitGap, most: maxChanges, sources: len(sources) + max(cfg.Shards, 1) - 1}, nil
}

// ErrConfig: a Writer's config is incomplete.
var ErrConfig = errors.New("audit: bad config")

// Run projects until ctx ends. Any number of processes may run it: each
// batch moves the one cursor with a compare-and-set, so a writer that
// lost the race starts again from the cursor the winner stored.
func (w *Writer) Run(ctx context.Context) error {
	for wait := time.Duration(0); ; {
		err := w.runOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errConflict) {
			wait = time.Duration(rand.Int64N(int64(50 * time.Millisecond)))
		} else {
			w.cfg.Logger.Warn("audit: writer", "err", err)
			wait = min(2*wait+100*time.Millisecond, 5*time.Second)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// cursor is the last stream sequence projected of each source.
type cursor map[string]uint64

func (w *Writer) loadCursor(ctx context.Context) (cursor, uint64, error) {
	st, err := w.cfg.JS.Stream(ctx, Stream)
	if err != nil {
		return nil, 0, err
	}
	m, err := st.GetLastMsgForSubject(ctx, events.AuditCursorSubject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return cursor{}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var c cursor
	if err := json.Unmarshal(m.Data, &c); err != nil {
		return nil, 0, fmt.Errorf("audit: cursor %d: %w", m.Sequence, err)
	}
	return c, m.Sequence, nil
}

// runOnce reads every source from the cursor on and commits batch after
// batch, until a commit fails (errConflict when another writer won).
func (w *Writer) runOnce(ctx context.Context) error {
	cur, curSeq, err := w.loadCursor(ctx)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs, errc := make(chan sourceMsg, readAhead), make(chan error, w.sources)
	for i := range w.sources {
		name := sourceName(i)
		from := cur[name] + 1 // read here: the batches below move cur on
		if w.cfg.Tap != nil && tapped(i) {
			go func() { errc <- w.pumpTapped(pctx, i, from, msgs) }()
			continue
		}
		go func() { errc <- w.pump(pctx, i, from, msgs) }()
	}
	b := &batch{w: w, fresh: map[domain.TenantID]bool{}}
	var last time.Time // the last commit's start
	for {
		if c := b.carry; len(c.changes) > 0 {
			b.reset(cur, curSeq)
			b.carry = carry{}
			b.addChanges(c.src, c.seq, c.changes)
		} else {
			select {
			case <-ctx.Done():
				return nil
			case err := <-errc:
				return err
			case m := <-msgs:
				b.reset(cur, curSeq)
				b.add(m)
			}
		}
		gather(ctx, b, msgs, last.Add(w.gap))
		last = time.Now()
		if curSeq, err = b.commit(ctx); err != nil {
			return err
		}
	}
}

// gather adds the queued messages to b until it is full, or none is
// queued and until has passed.
func gather(ctx context.Context, b *batch, msgs <-chan sourceMsg, until time.Time) {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	for !b.full() {
		select {
		case m := <-msgs:
			b.add(m)
			continue
		default:
		}
		select {
		case m := <-msgs:
			b.add(m)
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// pump feeds src's messages from stream sequence from on, in order.
func (w *Writer) pump(ctx context.Context, src int, from uint64, out chan<- sourceMsg) error {
	cons, err := w.cfg.JS.OrderedConsumer(ctx, sourceName(src), jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from})
	if err != nil {
		return fmt.Errorf("audit: source %s: %w", sourceName(src), err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("audit: source %s: %w", sourceName(src), err)
	}
	defer it.Stop()
	go func() { <-ctx.Done(); it.Stop() }()
	for {
		m, err := it.Next()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: source %s: %w", sourceName(src), err)
		}
		sm, err := fromJetStream(src, m)
		if err != nil {
			return err
		}
		select {
		case out <- sm:
		case <-ctx.Done():
			return nil
		}
	}
}

// batch is one atomic commit: the entries of some source messages, their
// tenants' tree hashes and the cursor past them.
type batch struct {
	w       *Writer
	fresh   map[domain.TenantID]bool // tenants synced since the cursor was loaded
	cur     cursor
	curSeq  uint64
	changes []change
	carry   carry  // what did not fit, for the next batch
	pack    []byte // a tenant's lines being packed (packer), reused
	out     []byte // the compressed entries messages, reused once sent
	// bytes bounds each tenant's packed lines, and msgs the batch's
	// messages (take).
	bytes map[domain.TenantID]int
	msgs  int
}

// carry is the rest of a source message's changes, after those a batch
// took.
type carry struct {
	src     int
	seq     uint64
	changes []change
}

// doneKey is the cursor's key for how many changes of src's message
// after the cursor are already stored: one message can hold more
// changes than a batch (a config revision, one for each tenant), so a
// batch may store part of one. Absent: none.
func doneKey(src int) string { return sourceName(src) + "#done" }

func (b *batch) reset(cur cursor, curSeq uint64) {
	b.cur, b.curSeq, b.changes, b.out = cur, curSeq, b.changes[:0], b.out[:0]
	if b.bytes == nil {
		b.bytes = map[domain.TenantID]int{}
	}
	clear(b.bytes)
	b.msgs = 1 // the cursor
}

// full reports whether b takes no more changes: it holds its most, or a
// change did not fit (carry).
func (b *batch) full() bool {
	return len(b.changes) >= b.w.most || len(b.carry.changes) > 0
}

// packs bounds the messages a tenant's lines of bytes bytes pack into: a
// message is closed only when the next line would take it past maxPack
// (packer.add), so any two consecutive messages hold more than maxPack
// between them, and n messages more than (n-1)*maxPack/2 bytes.
func packs(bytes int) int { return 1 + 2*bytes/maxPack }

// lineBound bounds the length of c's sealed line and its newline: its
// data, its other members at six bytes a character (an escape at worst),
// and the member names, seq, time and hashes.
func lineBound(c change) int {
	e := &c.entry
	data := len(e.Data)
	if !c.canonical { // canonicalized when sealed: bound its escapes too
		data *= 6
	}
	return data + 6*(len(e.Tenant)+len(e.Type)+len(e.Actor.Kind)+len(e.Actor.ID)+len(e.Subject)) + 512
}

// take counts c into the batch if its messages then stay within
// maxBatchMsgs (a tenant's entries messages, its tree message, the
// cursor), and reports whether it did. An empty batch takes any change.
func (b *batch) take(c change) bool {
	old, seen := b.bytes[c.tenant]
	grown := old + lineBound(c)
	msgs := b.msgs + packs(grown)
	if seen {
		msgs -= packs(old)
	} else {
		msgs++ // its tree message
	}
	if msgs > maxBatchMsgs && len(b.changes) > 0 {
		return false
	}
	b.bytes[c.tenant], b.msgs = grown, msgs
	return true
}

// add adds m's changes not yet stored.
func (b *batch) add(m sourceMsg) {
	cs := b.w.mapper.changes(m)
	if m.seq == b.cur[sourceName(m.src)]+1 {
		cs = cs[min(b.cur[doneKey(m.src)], uint64(len(cs))):]
	}
	b.addChanges(m.src, m.seq, cs)
}

// addChanges adds the changes of src's message seq, as many as the batch
// has room for; the cursor passes the message once all are in, and
// counts those in before.
func (b *batch) addChanges(src int, seq uint64, cs []change) {
	for i, c := range cs {
		if len(b.changes) < b.w.most && b.take(c) {
			b.changes = append(b.changes, c)
			continue
		}
		b.cur[doneKey(src)] += uint64(i)
		b.carry = carry{src: src, seq: seq, changes: cs[i:]}
		return
	}
	b.cur[sourceName(src)] = seq
	delete(b.cur, doneKey(src))
}
