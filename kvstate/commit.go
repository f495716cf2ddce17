package kvstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Group commit for request writes.
//
// With an fsync on every write, a stream takes one write at a time and the
// disk's sync latency sets the pace. Concurrent request writes are
// therefore gathered into JetStream atomic batches (NATS 2.12+): the server
// stages a batch, applies it and syncs once before it acknowledges any of
// it, so each acknowledged write is still on disk, and one fsync serves the
// whole batch. Every message keeps its own expected-last-sequence guard;
// if any of them fails, the whole batch is refused and each write is
// retried on its own, so a conflict is reported to exactly the writer that
// lost it.
//
// A batch is not free: the server builds a store for every atomic batch
// (staged in memory on the embedded server, internal/broker's staging.go).
// Where syncs are slow, one sync for many writes pays for it many times
// over; where syncs are nearly free (fast NVMe, tmpfs), pipelining the same
// writes singly costs less. So each group of queued writes goes the way
// that has cost less lately (chooser), and the other way is tried now and
// then, so the choice follows the disk it meets (BenchmarkCommitWays).
// The chooser weighs time, not CPU: on a store in memory, where the CPU is
// the limit, the server's staging of each batch is CPU that time does not
// show, and batches won groups that singles would have served for less. A
// store known to be in memory (Config.SyncsFree: a tmpfs) therefore commits
// every group singly.
//
// nats-server's other batched write, the fast batch (2.14+), is no third
// way: it is not atomic, and on a stream that syncs every write it stores
// and syncs each message on its own, as singles do (BenchmarkFastBatchSize
// against BenchmarkAtomicBatchSize). The figures behind both choices are
// in docs/operators/performance.md, "Measurements behind the design".

// maxBatch bounds one atomic batch (the server's default limit is 1000).
const maxBatch = 256

// commitTimeout bounds one batch's round trip.
const commitTimeout = 10 * time.Second

// committer gathers writes into batches from one goroutine, which runs
// while there is work and exits when idle. A write that finds it idle goes
// alone from its caller's goroutine (alone), and writes that come
// meanwhile queue for the loop it starts when done: no write waits on a
// timer, and one alone costs no goroutine.
type committer struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	enabled bool // the stream allows atomic publish
	gate    *writeGate

	mu      sync.Mutex
	queue   []*pendingWrite
	running bool
	refused atomic.Int64 // batches refused whole (each then went singly)
	// stored and storedBefore hold the sequence each key was stored at
	// lately (remember; the loop goroutine only).
	stored, storedBefore map[string]uint64
	rotated              time.Time
	choice               chooser // used by the holder of running only

	acks acks // every write's and batch's acknowledgement
}

type pendingWrite struct {
	msg  *nats.Msg
	last uint64
	done chan writeResult
	// seq is the stream sequence the write was stored at, set by commit
	// once it is durable (0: not stored).
	seq uint64
}

type writeResult struct {
	seq uint64
	err error
}

// enableAtomic turns on atomic publish on a bucket's stream; a server that
// cannot (before 2.12) leaves the committer writing one message at a time.
func enableAtomic(ctx context.Context, js jetstream.JetStream, bucket string) bool {
	st, err := js.Stream(ctx, StreamOf(bucket))
	if err != nil {
		return false
	}
	info, err := st.Info(ctx)
	if err != nil {
		return false
	}
	if info.Config.AllowAtomicPublish {
		return true
	}
	cfg := info.Config
	cfg.AllowAtomicPublish = true
	_, err = js.UpdateStream(ctx, cfg)
	return err == nil
}

// write publishes msg guarded by last (the key's expected last sequence)
// and returns its stream sequence once it is durable.
//
// While the write check finds a bucket a write needs without a leader
// (writeGate), it returns ErrUnavailable at once; a write waiting on its
// acknowledgement when the check finds that is answered ErrUnavailable
// then (its outcome unknown), not when the batch's timeout ends.
func (c *committer) write(ctx context.Context, msg *nats.Msg, last uint64) (uint64, error) {
	lost, err := c.gate.state()
	if err != nil {
		return 0, err
	}
	if !c.enabled {
		return c.single(ctx, msg, last)
	}
	c.mu.Lock()
	if !c.running { // idle: this write goes alone, from this goroutine
		c.running = true
		c.mu.Unlock()
		defer c.idle()
		return c.alone(ctx, msg, last, lost)
	}
	p := &pendingWrite{msg: msg, last: last, done: make(chan writeResult, 1)}
	c.queue = append(c.queue, p)
	c.mu.Unlock()
	select {
	case r := <-p.done:
		return r.seq, r.err
	case <-ctx.Done():
		return 0, errors.Join(ErrUnavailable, ctx.Err())
	case <-lost:
		return 0, c.gate.lostErr()
	}
}

// alone commits one write while the committer runs it alone (it holds
// running, so nothing else commits meanwhile), waiting for its
// acknowledgement in the caller's goroutine: no goroutine is started and
// no other write waits for a timer, so a write on an idle committer costs
// one round trip to the server.
func (c *committer) alone(ctx context.Context, msg *nats.Msg, last uint64, lost <-chan struct{}) (uint64, error) {
	p := &pendingWrite{msg: msg, last: last, done: make(chan writeResult, 1)}
	if len(c.dropLost([]*pendingWrite{p})) == 0 {
		r := <-p.done
		return 0, r.err
	}
	start := time.Now()
	reply, ack, err := c.post(msg, last)
	if err != nil {
		return 0, mapErr(err)
	}
	timer := time.NewTimer(commitTimeout) // as the loop bounds its groups
	defer timer.Stop()
	var seq uint64
	select {
	case m := <-ack:
		c.choice.observeSingles(time.Since(start), 0, 1)
		seq, err = pubAck(m)
	case <-timer.C:
		c.acks.forget(reply)
		return 0, errors.Join(ErrUnavailable, fmt.Errorf("kvstate: no acknowledgement in %v", commitTimeout))
	case <-ctx.Done():
		c.acks.forget(reply)
		return 0, errors.Join(ErrUnavailable, ctx.Err())
	case <-lost:
		c.acks.forget(reply)
		return 0, c.gate.lostErr()
	}
	if errors.Is(err, errNoStream) { // no leader just now: as singles are retried
		seq, err = c.single(ctx, msg, last)
	}
	if err == nil {
		p.seq = seq
		c.remember([]*pendingWrite{p})
	}
	return seq, err
}

// idle ends a write that went alone: the writes queued meanwhile go on in
// the loop, or the committer is idle again.
func (c *committer) idle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		c.running = false
		return
	}
	go c.loop()
}

// loop commits what is queued, batch after batch, until the queue is empty.
//
// The writers of a committed batch are told only once the next batch is
// on its way to the server (or at once when nothing is queued): woken
// first, they would take the cores (their answers, the next requests)
// while the server's goroutines that read and store the next batch wait
// behind them.
//
// A write that is bound to lose never goes in a batch: it expects its
// key's last sequence, and a failed write refuses its whole batch (every
// other write then goes singly). So two writes to one key never share a
// batch (the later is held back to the next), and a write whose key this
// committer has stored past what it expects is told it lost
// (ErrConflict) without being sent.
func (c *committer) loop() {
	var tell func()          // tells the last batch's writers; nil: told
	var held []*pendingWrite // kept out of the last batch, behind a write to the same key
	for {
		c.mu.Lock()
		if len(held) > 0 {
			c.queue = append(held, c.queue...)
			held = nil
		}
		n := min(len(c.queue), maxBatch)
		if n == 0 {
			c.running = false
			c.mu.Unlock()
			if tell != nil {
				tell()
			}
			return
		}
		take := c.queue[:n:n]
		c.queue = c.queue[n:]
		c.mu.Unlock()
		var batch []*pendingWrite
		batch, held = oneWritePerKey(c.dropLost(take))
		if len(batch) == 0 {
			continue
		}
		way, k := asSingles, 1
		if len(batch) > 1 {
			way, k = c.choice.choose(len(batch))
		}
		if k < len(batch) { // a probe: the rest go next
			held = append(batch[k:len(batch):len(batch)], held...)
			batch = batch[:k]
		}
		tell = c.commit(batch, way, tell)
		c.remember(batch)
	}
}

// oneWritePerKey splits writes into the first write to each key, in order,
// and the later ones.
func oneWritePerKey(writes []*pendingWrite) (batch, later []*pendingWrite) {
	keys := make(map[string]bool, len(writes))
	for _, p := range writes {
		if keys[p.msg.Subject] {
			later = append(later, p)
			continue
		}
		keys[p.msg.Subject] = true
		batch = append(batch, p)
	}
	return batch, later
}

// dropLost tells each write whose key was stored past the sequence it
// expects that it lost, and returns the others.
func (c *committer) dropLost(writes []*pendingWrite) []*pendingWrite {
	keep := writes[:0:0]
	for _, p := range writes {
		if p.last < max(c.stored[p.msg.Subject], c.storedBefore[p.msg.Subject]) {
			p.done <- writeResult{err: ErrConflict}
			continue
		}
		keep = append(keep, p)
	}
	return keep
}

// remember keeps the sequence each stored write got, for dropLost, for
// between rememberFor and twice that: a key's last sequence only grows
// while it holds a value, but a key that expires and is made again starts
// over, so an old memory could refuse a write that would succeed.
func (c *committer) remember(batch []*pendingWrite) {
	if now := time.Now(); c.stored == nil || now.Sub(c.rotated) > rememberFor {
		c.storedBefore, c.stored, c.rotated = c.stored, make(map[string]uint64, len(batch)), now
	}
	for _, p := range batch {
		if p.seq > 0 {
			c.stored[p.msg.Subject] = p.seq
		}
	}
}

// rememberFor is how long, at least, remember keeps a stored sequence: a
// write that lost its race is sent within a few milliseconds of the one
// that won.
const rememberFor = 250 * time.Millisecond

// commit commits batch, calling told (the previous batch's news, if any)
// once batch is sent, and returns the func that tells batch's writers
// (nil when they were told already).
func (c *committer) commit(batch []*pendingWrite, way int, told func()) (tell func()) {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	sent := func() {
		if told != nil {
			told()
			told = nil
		}
	}
	defer sent()
	start := time.Now()
	if way == asBatch {
		wait, err := c.send(batch)
		sent()
		var first uint64
		if err == nil {
			first, err = wait()
		}
		if err == nil {
			c.choice.observeBatch(time.Since(start))
			for i, p := range batch {
				p.seq = first + uint64(i)
			}
			return func() {
				for i, p := range batch {
					p.done <- writeResult{seq: first + uint64(i)}
				}
			}
		}
		// Refused whole (a conflict inside, say): each write on its own,
		// so that only the one that lost is told so. Not a measure.
		c.refused.Add(1)
		c.singles(ctx, batch)
		return nil
	}
	sent()
	if first, spread, ok := c.singles(ctx, batch); ok {
		c.choice.observeSingles(first, spread, len(batch))
	}
	return nil
}

// singles publishes each write of batch on its own, pipelined from this
// goroutine, and waits for all of them. ok tells that all were answered
// without an error; first is then the time to the first answer (a round
// trip), spread the time from the first answer to the last.
func (c *committer) singles(ctx context.Context, batch []*pendingWrite) (first, spread time.Duration, ok bool) {
	start := time.Now()
	ok = true
	replies := make([]string, len(batch))
	waits := make([]<-chan *nats.Msg, len(batch))
	for i, p := range batch {
		var err error
		if replies[i], waits[i], err = c.post(p.msg, p.last); err != nil {
			waits[i], ok = nil, false
			p.done <- writeResult{err: mapErr(err)}
		}
	}
	for i, p := range batch {
		if waits[i] == nil {
			continue
		}
		var r writeResult
		select {
		case m := <-waits[i]:
			r.seq, r.err = pubAck(m)
		case <-ctx.Done():
			c.acks.forget(replies[i])
			r.err = errors.Join(ErrUnavailable, ctx.Err())
		}
		if errors.Is(r.err, errNoStream) { // no leader just now: retried as jetstream does
			r.seq, r.err = c.single(ctx, p.msg, p.last)
		}
		if r.err == nil {
			p.seq = r.seq
		}
		ok = ok && r.err == nil
		if i == 0 {
			first = time.Since(start)
		}
		p.done <- r
	}
	return first, time.Since(start) - first, ok
}

// post publishes msg guarded by last, with a reply subject of its own,
// and returns the channel its acknowledgement arrives on.
func (c *committer) post(msg *nats.Msg, last uint64) (reply string, ack <-chan *nats.Msg, err error) {
	reply, ack, err = c.acks.expect()
	if err != nil {
		return "", nil, err
	}
	msg.Header.Set(nats.ExpectedLastSubjSeqHdr, strconv.FormatUint(last, 10))
	msg.Reply = reply
	err = c.nc.PublishMsg(msg)
	msg.Reply = ""
	if err != nil {
		c.acks.forget(reply)
		return "", nil, err
	}
	return reply, ack, nil
}

// single publishes msg guarded by last through jetstream, which retries
// while no stream answers.
func (c *committer) single(ctx context.Context, msg *nats.Msg, last uint64) (uint64, error) {
	msg.Header.Del(nats.ExpectedLastSubjSeqHdr)
	ack, err := c.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(last))
	if err != nil {
		return 0, mapErr(err)
	}
	return ack.Sequence, nil
}

// send publishes batch as one atomic batch, and returns the wait for its
// acknowledgement: the sequence of its first message; any error means
// nothing of it was stored.
func (c *committer) send(batch []*pendingWrite) (wait func() (uint64, error), err error) {
	reply, ack, err := c.acks.expect()
	if err != nil {
		return nil, err
	}
	id := nuid.Next()
	last := batch[len(batch)-1].msg
	clear := func() {
		last.Reply = ""
		for _, p := range batch {
			for _, k := range []string{"Nats-Batch-Id", "Nats-Batch-Sequence", "Nats-Batch-Commit"} {
				p.msg.Header.Del(k)
			}
		}
	}
	for i, p := range batch {
		h := p.msg.Header
		h.Set(nats.ExpectedLastSubjSeqHdr, strconv.FormatUint(p.last, 10))
		h.Set("Nats-Batch-Id", id)
		h.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
		if p.msg == last {
			h.Set("Nats-Batch-Commit", "1")
			last.Reply = reply
		}
		if err := c.nc.PublishMsg(p.msg); err != nil {
			clear()
			c.acks.forget(reply)
			return nil, err
		}
	}
	return func() (uint64, error) {
		defer clear()
		timer := time.NewTimer(commitTimeout)
		defer timer.Stop()
		select {
		case m := <-ack:
			return batchAck(m.Data, id, len(batch))
		case <-timer.C:
			// A late acknowledgement is dropped: the batch's writes are
			// retried singly, and lose to itself.
			c.acks.forget(reply)
			return 0, fmt.Errorf("kvstate: batch %s: %w", id, nats.ErrTimeout)
		}
	}, nil
}

// batchAck checks an atomic batch's acknowledgement.
func batchAck(data []byte, id string, n int) (uint64, error) {
	var ack struct {
		Seq   uint64 `json:"seq"`
		Batch string `json:"batch"`
		Count int    `json:"count"`
		Error *struct {
			Code        int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &ack); err != nil {
		return 0, fmt.Errorf("kvstate: batch ack: %w", err)
	}
	if ack.Error != nil {
		return 0, fmt.Errorf("kvstate: batch refused (%d): %s", ack.Error.Code, ack.Error.Description)
	}
	if ack.Batch != id || ack.Count != n || ack.Seq < uint64(n) {
		return 0, fmt.Errorf("kvstate: batch ack %+v does not match batch %s of %d", ack, id, n)
	}
	return ack.Seq - uint64(n) + 1, nil
}

// The two ways to commit a group of queued writes.
const (
	asBatch   = 0 // one atomic batch, one sync
	asSingles = 1 // each write on its own, pipelined
)

// probeEvery is how often, in groups, the way not taken is tried again,
// so that a change (a cache filling, a disk slowing) is noticed. Singles
// are tried on the first probeSingles writes of a group only (the rest go
// in the next): on a disk that syncs slowly, each costs a sync.
const (
	probeEvery   = 32
	probeSingles = 4
)

// chooser picks the way to commit each group from what each way cost
// lately (exponentially weighted averages). A batch costs about the same
// whatever its size (one sync, and the server's per-batch store). Singles
// pipelined cost a round trip (the time to the first answer) and then each
// further write what it adds (the spacing of the answers: its sync, and
// its share of the cores). So a group of n goes as singles when a round
// trip and n-1 spacings cost less than one batch. The spacing is measured
// within one group, so a round trip that is dear (a loaded machine) is not
// counted in every write, and a probe of a few writes is enough.
type chooser struct {
	// syncsFree: the store is in memory (Config.SyncsFree), so there is no
	// sync for a batch to share and every group goes singly.
	syncsFree bool
	batch     float64 // ns per batch; 0: not measured yet
	one       float64 // ns to the first answer of singles (a round trip); 0: not measured yet
	single    float64 // ns each further write adds to singles; 0: not measured yet
	groups    uint64
}

// choose returns the way for the next group of n (n > 1) queued writes,
// and how many of them go in it (fewer than n for a probe of singles).
func (c *chooser) choose(n int) (way, k int) {
	if c.syncsFree {
		return asSingles, n
	}
	c.groups++
	probe := min(n, probeSingles)
	switch {
	case c.batch == 0:
		return asBatch, n
	case c.single == 0:
		return asSingles, probe
	}
	best := asBatch
	if c.one+float64(n-1)*c.single < c.batch {
		best = asSingles
	}
	if c.groups%probeEvery == 0 {
		if best == asSingles {
			return asBatch, n
		}
		return asSingles, probe
	}
	return best, n
}

// observeBatch records that a batch took d.
func (c *chooser) observeBatch(d time.Duration) { ewma(&c.batch, float64(d)) }

// observeSingles records that n writes sent singly had their first answer
// after first, and the last spread after it.
func (c *chooser) observeSingles(first, spread time.Duration, n int) {
	ewma(&c.one, float64(first))
	if n > 1 {
		ewma(&c.single, float64(spread)/float64(n-1))
	}
}

// ewma adds sample (at least 1) to the average at avg (0: none yet).
func ewma(avg *float64, sample float64) {
	const weight = 0.2
	sample = max(sample, 1)
	if *avg == 0 {
		*avg = sample
		return
	}
	*avg += weight * (sample - *avg)
}
