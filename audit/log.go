package audit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/tlog"
)

// Headers of the audit stream's messages.
const (
	hdrSeq      = "Audit-Seq"       // an entries message's first entry's seq
	hdrFirst    = "Audit-First"     // a tree message's first record's seq
	hdrCount    = "Audit-Count"     // how many records a tree message adds, or lines an entries message holds (absent: 1)
	hdrLastHash = "Audit-Last-Hash" // the hash of a tree message's last entry
	hdrParts    = "Audit-Parts"     // how many entries messages just before a tree message hold its records (absent: one each)
	hdrEncoding = "Audit-Encoding"  // how an entries message's lines are compressed (absent: not at all)
)

// encodingS2 is Audit-Encoding for lines compressed with S2
// (github.com/klauspost/compress/s2, its block format).
const encodingS2 = "s2"

// Log reads the tenants' logs from the audit stream: each tenant's Merkle
// tree (from the tree messages, which the writer stores with the entries
// in one atomic batch) and its entries. It keeps each tenant's tree in
// memory and catches up with the stream on every read, so any process
// serves what any writer wrote. Its methods are safe for concurrent use.
type Log struct {
	js      jetstream.JetStream
	mu      sync.Mutex
	tenants map[domain.TenantID]*tenantLog
}

// tenantLog is one tenant's tree as read so far.
type tenantLog struct {
	mu      sync.Mutex
	tree    Tree
	last    string   // the last entry's hash
	treeSeq uint64   // stream sequence of the last tree message read
	batches []anchor // where each batch's first entries message is stored
}

// anchor maps a batch's first entry's seq to the stream sequence of the
// message that holds it.
type anchor struct{ seq, stream uint64 }

// NewLog returns a Log reading through js.
func NewLog(js jetstream.JetStream) *Log {
	return &Log{js: js, tenants: map[domain.TenantID]*tenantLog{}}
}

func (l *Log) tenant(t domain.TenantID) *tenantLog {
	l.mu.Lock()
	defer l.mu.Unlock()
	tl := l.tenants[t]
	if tl == nil {
		tl = &tenantLog{last: ZeroHash}
		l.tenants[t] = tl
	}
	return tl
}

// sync reads the tree messages stored after those tl holds. tl.mu is held.
func (l *Log) sync(ctx context.Context, t domain.TenantID, tl *tenantLog) error {
	subject := events.AuditTreeSubject(t)
	last, err := l.js.Stream(ctx, Stream)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	m, err := last.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) || (err == nil && m.Sequence <= tl.treeSeq) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit: %s: %w", t, err)
	}
	cons, err := l.js.OrderedConsumer(ctx, Stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: tl.treeSeq + 1})
	if err != nil {
		return fmt.Errorf("audit: %s: %w", t, err)
	}
	// One iterator, not Next: an ordered consumer's Next makes a consumer
	// of its own each call, and a log holds a tree message a batch.
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("audit: %s: %w", t, err)
	}
	defer it.Stop()
	for tl.treeSeq < m.Sequence {
		msg, err := it.Next(jetstream.NextMaxWait(defaultWait))
		if err != nil {
			return fmt.Errorf("audit: %s: tree: %w", t, err)
		}
		if err := tl.apply(msg); err != nil {
			return fmt.Errorf("audit: %s: %w", t, err)
		}
	}
	return nil
}

// apply adds one tree message's records to tl.
func (tl *tenantLog) apply(msg jetstream.Msg) error {
	md, err := msg.Metadata()
	if err != nil {
		return err
	}
	h := msg.Headers()
	first, _ := strconv.ParseInt(h.Get(hdrFirst), 10, 64)
	count, _ := strconv.ParseInt(h.Get(hdrCount), 10, 64)
	want := tlog.StoredHashIndex(0, first-1+count) - tlog.StoredHashIndex(0, first-1)
	if first != tl.tree.n+1 || count < 1 || int64(len(msg.Data())) != want*tlog.HashSize {
		return fmt.Errorf("tree message %d does not follow record %d", md.Sequence.Stream, tl.tree.n)
	}
	for b := msg.Data(); len(b) > 0; b = b[tlog.HashSize:] {
		tl.tree.hashes = append(tl.tree.hashes, tlog.Hash(b[:tlog.HashSize]))
	}
	tl.tree.n += count
	tl.last, tl.treeSeq = h.Get(hdrLastHash), md.Sequence.Stream
	parts, err := strconv.ParseInt(h.Get(hdrParts), 10, 64)
	if err != nil {
		parts = count // written before entries were packed
	}
	tl.batches = append(tl.batches, anchor{seq: uint64(first), stream: md.Sequence.Stream - uint64(parts)})
	return nil
}

// Tree calls fn with tenant's tree as stored now, under its lock.
func (l *Log) Tree(ctx context.Context, t domain.TenantID, fn func(*Tree) error) error {
	tl := l.tenant(t)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if err := l.sync(ctx, t, tl); err != nil {
		return err
	}
	return fn(&tl.tree)
}
