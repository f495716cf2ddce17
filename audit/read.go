package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/klauspost/compress/s2"
	"github.com/nats-io/nats.go/jetstream"
)

// defaultWait bounds one wait for a stored message the stream said it has.
const defaultWait = 10 * time.Second

// hdrAt is an entry's time, RFC 3339.
const hdrAt = "Audit-At"

// Entries calls fn with each of tenant's stored entries after seq after,
// in order, up to the last one stored when it was called, stopping
// before the first one later than until (when until is set). fn gets the
// entry's exported line (no newline). Entries removed after the tenant's
// audit_retention are skipped. Errors: fn's, or reading the stream's.
func (l *Log) Entries(ctx context.Context, t domain.TenantID, after uint64, until time.Time, fn func(line []byte) error) error {
	start, n, err := l.startOf(ctx, t, after)
	if err != nil || start == 0 {
		return err
	}
	cons, err := l.js.OrderedConsumer(ctx, Stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{events.AuditEntrySubject(t)},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start})
	if err != nil {
		return fmt.Errorf("audit: %s: %w", t, err)
	}
	it, err := cons.Messages(jetstream.PullMaxBytes(4 * maxPack))
	if err != nil {
		return fmt.Errorf("audit: %s: %w", t, err)
	}
	defer it.Stop()
	for {
		msg, err := next(ctx, cons, it)
		if err != nil || msg == nil {
			return err
		}
		seq, _ := strconv.ParseUint(msg.Headers().Get(hdrSeq), 10, 64)
		data, err := Lines(msg)
		if err != nil {
			return err
		}
		for line := range bytes.SplitSeq(data, []byte{'\n'}) {
			if seq > n || (!until.IsZero() && timeOf(line).After(until)) {
				return nil
			}
			if seq > after {
				if err := fn(line); err != nil {
					return err
				}
			}
			seq++
		}
		md, err := msg.Metadata()
		if err != nil || md.NumPending == 0 || seq > n {
			return err
		}
	}
}

// Lines returns the exported lines an entries message of the audit
// stream holds, newline-separated, uncompressed. Errors: an encoding
// this version does not know, or a damaged message.
func Lines(msg jetstream.Msg) ([]byte, error) {
	switch enc := msg.Headers().Get(hdrEncoding); enc {
	case "":
		return msg.Data(), nil // stored before entries were compressed
	case encodingS2:
		data, err := s2.Decode(nil, msg.Data())
		if err != nil {
			return nil, fmt.Errorf("audit: entries message %s: %w", msg.Subject(), err)
		}
		return data, nil
	default:
		return nil, fmt.Errorf("audit: entries message %s: unknown %s %q", msg.Subject(), hdrEncoding, enc)
	}
}

// timeOf returns an exported line's at.
func timeOf(line []byte) time.Time {
	var e struct {
		At time.Time `json:"at"`
	}
	_ = json.Unmarshal(line, &e)
	return e.At
}

// next returns the next entries message, or nil when none is left:
// entries past their retention may be removed while they are read.
func next(ctx context.Context, cons jetstream.Consumer, it jetstream.MessagesContext) (jetstream.Msg, error) {
	for wait := time.Duration(0); wait < defaultWait; wait += time.Second {
		msg, err := it.Next(jetstream.NextMaxWait(time.Second))
		if err == nil {
			return msg, nil
		}
		info, err := cons.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("audit: entries: %w", err)
		}
		if info.NumPending == 0 {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("audit: entries: not delivered within %v", defaultWait)
}

// startOf returns the stream sequence to read tenant's entries after seq
// after from (0: none to read) and the log's size now.
func (l *Log) startOf(ctx context.Context, t domain.TenantID, after uint64) (start, n uint64, err error) {
	tl := l.tenant(t)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if err := l.sync(ctx, t, tl); err != nil {
		return 0, 0, err
	}
	n = uint64(tl.tree.n)
	if after >= n {
		return 0, n, nil
	}
	st, err := l.js.Stream(ctx, Stream)
	if err != nil {
		return 0, 0, fmt.Errorf("audit: %w", err)
	}
	if _, err := st.GetLastMsgForSubject(ctx, events.AuditEntrySubject(t)); errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, n, nil // every entry is past its retention
	} else if err != nil {
		return 0, 0, fmt.Errorf("audit: %s: %w", t, err)
	}
	i := sort.Search(len(tl.batches), func(i int) bool { return tl.batches[i].seq > after+1 }) - 1
	return tl.batches[max(i, 0)].stream, n, nil // Entries skips what is not after
}
