package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/klauspost/compress/s2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"golang.org/x/mod/sumdb/tlog"
)

// wrongLastSequence is JetStream's error code for a failed
// expected-last-sequence check.
const wrongLastSequence = 10071

// grown is one tenant's part of a batch: the records it adds to the tree.
type grown struct {
	tl     *tenantLog
	base   int64       // tree size before
	hashes []tlog.Hash // the stored hashes the records add
	last   string      // the last entry's hash
	count  int64
	parts  int // entries messages, stored just before its tree message
	at     int // index of its tree message in the batch
}

// ReadHashes reads the tree as it will be once g's records are added.
func (g *grown) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	stored := int64(len(g.tl.tree.hashes))
	for i, x := range indexes {
		switch {
		case x < stored:
			out[i] = g.tl.tree.hashes[x]
		case x-stored < int64(len(g.hashes)):
			out[i] = g.hashes[x-stored]
		default:
			return nil, fmt.Errorf("audit: tree hash %d not stored", x)
		}
	}
	return out, nil
}

// commit stores the batch's entries, each tenant's tree hashes and the
// cursor as one atomic batch, the cursor guarded by its last sequence,
// and returns the new cursor's sequence. Errors: errConflict, or the
// store's.
func (b *batch) commit(ctx context.Context) (uint64, error) {
	var msgs []*nats.Msg
	var parts []*grown
	byTenant := map[domain.TenantID]*grown{}
	var order []domain.TenantID
	for _, c := range b.changes {
		if byTenant[c.tenant] == nil {
			byTenant[c.tenant] = &grown{}
			order = append(order, c.tenant)
		}
	}
	for _, t := range order {
		g, err := b.grow(ctx, t, &msgs)
		if err != nil {
			return 0, err
		}
		parts = append(parts, g)
	}
	cur, _ := json.Marshal(b.cur)
	cm := &nats.Msg{Subject: events.AuditCursorSubject, Data: cur, Header: nats.Header{}}
	cm.Header.Set(nats.ExpectedLastSubjSeqHdr, strconv.FormatUint(b.curSeq, 10))
	msgs = append(msgs, cm)
	first, err := b.send(ctx, msgs)
	if err != nil {
		return 0, err
	}
	for _, g := range parts {
		g.apply(first + uint64(g.at))
	}
	if lag := b.w.cfg.Lag; lag != nil {
		now := time.Now()
		for _, c := range b.changes {
			lag(now.Sub(c.entry.At))
		}
	}
	return first + uint64(len(msgs)) - 1, nil
}

// grow seals t's entries of the batch and appends them and t's tree
// message to msgs.
func (b *batch) grow(ctx context.Context, t domain.TenantID, msgs *[]*nats.Msg) (*grown, error) {
	tl := b.w.cfg.Log.tenant(t)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if !b.fresh[t] {
		if err := b.w.cfg.Log.sync(ctx, t, tl); err != nil {
			return nil, err
		}
		b.fresh[t] = true
	}
	g := &grown{tl: tl, base: tl.tree.n, last: tl.last}
	p := packer{ttl: b.w.cfg.Retention(t).String(), subject: events.AuditEntrySubject(t), msgs: msgs, buf: b.pack[:0], out: &b.out}
	for _, c := range b.changes {
		if c.tenant != t {
			continue
		}
		e := c.entry
		e.Seq, e.Prev = uint64(g.base+g.count+1), g.last
		line, err := p.add(&e, c.canonical)
		if err != nil {
			return nil, err
		}
		hs, err := tlog.StoredHashes(g.base+g.count, line, g)
		if err != nil {
			return nil, err
		}
		g.hashes, g.last, g.count = append(g.hashes, hs...), e.Hash, g.count+1
	}
	p.flush()
	b.pack, g.parts = p.buf, p.parts
	data := make([]byte, 0, len(g.hashes)*tlog.HashSize)
	for _, h := range g.hashes {
		data = append(data, h[:]...)
	}
	tm := &nats.Msg{Subject: events.AuditTreeSubject(t), Data: data, Header: nats.Header{}}
	tm.Header.Set(hdrFirst, strconv.FormatInt(g.base+1, 10))
	tm.Header.Set(hdrCount, strconv.FormatInt(g.count, 10))
	tm.Header.Set(hdrLastHash, g.last)
	tm.Header.Set(hdrParts, strconv.Itoa(g.parts))
	g.at = len(*msgs)
	*msgs = append(*msgs, tm)
	return g, nil
}

// maxPack bounds the lines one entries message packs (a longer line
// goes alone), far below the server's 1 MiB payload limit.
const maxPack = 256 << 10

// packer packs a tenant's consecutive entries of a batch into as few
// messages as maxPack allows: each message stored costs the server a
// write and, syncing always, an fsync, so one message an entry made the
// audit cost as much again as the decision it records.
//
// A packed message is compressed with S2 (Audit-Encoding: s2): the
// server's cost of a batch grows with its bytes (it copies each message
// into a staging store, then into the stream's block cache, and writes
// it twice), and a tenant's entries, lines of the same few shapes,
// shrink about ten-fold for little CPU (figures in
// docs/operators/performance.md; the tree hashes, not compressed, are
// much of what is left).
type packer struct {
	ttl, subject string
	msgs         *[]*nats.Msg
	buf          []byte  // the lines packed so far, newline-separated (the batch's buffer, reused)
	out          *[]byte // room for the compressed messages (the batch's, reused once they are sent)
	lines        int
	first        uint64
	at           time.Time
	parts        int
}

// add seals e into the pack and returns its line, valid until the next
// add. A line that would take the pack past maxPack starts the next
// message.
func (p *packer) add(e *Entry, canonical bool) ([]byte, error) {
	start := len(p.buf)
	if p.lines > 0 {
		start++
	}
	buf, err := appendSeal(append(p.buf, "\n"[:start-len(p.buf)]...), e, canonical)
	if err != nil {
		return nil, err
	}
	line := buf[start:]
	if p.lines > 0 && len(buf) > maxPack {
		p.buf = buf[:start-1]
		p.flush()
		buf = append(p.buf[:0], line...) // copy's overlap is safe
		line = buf
	}
	if p.lines == 0 {
		p.first, p.at = e.Seq, e.At
	}
	p.buf, p.lines = buf, p.lines+1
	return line, nil
}

// flush appends the lines packed so far as one message, compressed:
// Audit-Seq is its first entry's seq, Audit-Count how many lines it
// holds, Audit-At its first entry's time.
func (p *packer) flush() {
	if p.lines == 0 {
		return
	}
	n := s2.MaxEncodedLen(len(p.buf))
	if cap(*p.out)-len(*p.out) < n {
		*p.out = make([]byte, 0, max(n, 1<<20)) // the messages before keep the old one
	}
	o := len(*p.out)
	data := s2.Encode((*p.out)[o:o+n], p.buf)
	*p.out = (*p.out)[:o+len(data)]
	m := &nats.Msg{Subject: p.subject, Data: data, Header: nats.Header{}}
	m.Header.Set(hdrEncoding, encodingS2)
	m.Header.Set(hdrSeq, strconv.FormatUint(p.first, 10))
	m.Header.Set(hdrCount, strconv.Itoa(p.lines))
	m.Header.Set(hdrAt, p.at.Format(time.RFC3339Nano))
	m.Header.Set(jetstream.MsgTTLHeader, p.ttl)
	*p.msgs = append(*p.msgs, m)
	p.buf, p.lines, p.parts = p.buf[:0], 0, p.parts+1
}

// appendSeal seals e and appends its line to dst. e's data is in RFC
// 8785 form already if canonical; data the canonicalizer refuses (a
// number out of range, say) is kept as a JSON string of its bytes rather
// than block the log.
func appendSeal(dst []byte, e *Entry, canonical bool) ([]byte, error) {
	if canonical {
		if line, ok := appendSealCanonical(dst, e); ok {
			return line, nil
		}
	}
	line, err := Seal(e)
	if err != nil {
		e.Data, _ = json.Marshal(map[string]string{"unparsed": string(e.Data)})
		if line, err = Seal(e); err != nil {
			return nil, err
		}
	}
	return append(dst, line...), nil
}

// apply adds g's records to its tenant's tree once stored, unless a read
// caught up with them first.
func (g *grown) apply(treeSeq uint64) {
	g.tl.mu.Lock()
	defer g.tl.mu.Unlock()
	if g.tl.tree.n != g.base {
		return
	}
	g.tl.tree.hashes = append(g.tl.tree.hashes, g.hashes...)
	g.tl.tree.n += g.count
	g.tl.last, g.tl.treeSeq = g.last, treeSeq
	g.tl.batches = append(g.tl.batches, anchor{seq: uint64(g.base + 1), stream: treeSeq - uint64(g.parts)})
}

// send publishes msgs as one atomic batch and returns the stream sequence
// of the first. Errors: errConflict when the cursor moved meanwhile.
func (b *batch) send(ctx context.Context, msgs []*nats.Msg) (uint64, error) {
	nc, id := b.w.cfg.JS.Conn(), nuid.Next()
	for i, m := range msgs {
		m.Header.Set(hdrBatchID, id)
		m.Header.Set(hdrBatchSeq, strconv.Itoa(i+1))
		if i == len(msgs)-1 {
			break
		}
		if err := nc.PublishMsg(m); err != nil {
			return 0, err
		}
	}
	last := msgs[len(msgs)-1]
	last.Header.Set(hdrBatchCommit, "1")
	ctx, cancel := context.WithTimeout(ctx, defaultWait)
	defer cancel()
	reply, err := nc.RequestMsgWithContext(ctx, last)
	if err != nil {
		return 0, fmt.Errorf("audit: commit: %w", err)
	}
	var ack struct {
		Seq   uint64 `json:"seq"`
		Count int    `json:"count"`
		Error *struct {
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return 0, fmt.Errorf("audit: commit: %w", err)
	}
	switch {
	case ack.Error != nil && ack.Error.ErrCode == wrongLastSequence:
		return 0, errConflict
	case ack.Error != nil:
		return 0, fmt.Errorf("audit: commit refused: %s", ack.Error.Description)
	case ack.Count != len(msgs) || ack.Seq < uint64(len(msgs)):
		return 0, fmt.Errorf("audit: commit: ack of %d messages for %d", ack.Count, len(msgs))
	}
	return ack.Seq - uint64(len(msgs)) + 1, nil
}
