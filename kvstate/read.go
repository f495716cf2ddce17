package kvstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reads that decide something.
//
// A KV get is a direct get, which any replica of the bucket's stream may
// answer (nats.go creates KV streams with allow_direct), including a
// follower that is behind: just restarted and catching up, or merely a
// moment behind under load. On a replicated bucket such a read may miss a
// write the leader has acknowledged, and an answer to a request the caller
// has just seen would come back 404 or a false 409. So on a replicated
// bucket (replicas > 1) the reads that decide something go to the stream's
// message get API, which only the stream leader answers; on one replica
// (embedded) there is no lag and the direct get stays.
//
// Even the leader's read is not linearizable: NATS has no read lease, and a
// leader just elected (or one deposed without knowing it yet) may answer
// from state that misses the latest writes. Writes are safe regardless
// (every write is a compare-and-set on the key's last sequence, which the
// leader checks as it orders the write), so a stale read can only refuse
// wrongly, never write wrongly. Callers therefore pass a floor, the
// newest revision of the key they already know (the local mirror's, or
// the one a compare-and-set just lost to): a read below it is stale and
// is read again, a bounded number of times (readRetries, backing off),
// before ErrUnavailable (with ErrStale) is returned rather than a false
// not-found or conflict.

// readRetries bounds the re-reads of a stale read; with the backoff from
// readBackoff doubling up to maxReadBackoff the re-reads span about 3 s,
// more than a leader election takes.
var readRetries = 10 // a variable for tests

const (
	readBackoff    = 10 * time.Millisecond
	maxReadBackoff = 500 * time.Millisecond
)

// leaderGetTimeout bounds one leader read when ctx has no deadline.
const leaderGetTimeout = 5 * time.Second

// stored is the latest value of a key as read.
type stored struct {
	key   string
	value []byte
	rev   uint64
	at    time.Time
}

// readKey reads the latest value of key in bucket (kv bound to it): from
// the stream leader on a replicated bucket, else by direct get.
func (s *Store) readKey(ctx context.Context, bucket string, kv jetstream.KeyValue, key string) (stored, error) {
	if !s.leaderReads {
		e, err := kv.Get(ctx, key)
		if err != nil {
			return stored{}, mapErr(err)
		}
		return stored{key: key, value: e.Value(), rev: e.Revision(), at: e.Created()}, nil
	}
	m, err := s.leaderLast(ctx, StreamOf(bucket), subjectOf(bucket, key))
	if err != nil {
		return stored{}, err
	}
	switch m.Header.Get(kvOperationHdr) {
	case "DEL", "PURGE":
		return stored{}, ErrNotFound
	}
	return stored{key: key, value: m.Data, rev: m.Sequence, at: m.Time}, nil
}

// readKeyAfter is readKey that treats a value older than floor (or none,
// when floor > 0) as stale and reads again; see the comment above.
func (s *Store) readKeyAfter(ctx context.Context, bucket string, kv jetstream.KeyValue, key string, floor uint64) (stored, error) {
	wait := readBackoff
	for attempt := 0; ; attempt++ {
		got, err := s.readKey(ctx, bucket, kv, key)
		if floor == 0 || (err == nil && got.rev >= floor) || (err != nil && !errors.Is(err, ErrNotFound)) {
			return got, err
		}
		if attempt == readRetries {
			return stored{}, errors.Join(ErrUnavailable, ErrStale,
				fmt.Errorf("kvstate: %s %s: reads stay below revision %d", bucket, key, floor))
		}
		select {
		case <-ctx.Done():
			return stored{}, errors.Join(ErrUnavailable, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, maxReadBackoff)
	}
}

// kvOperationHdr marks a KV delete or purge.
const kvOperationHdr = "KV-Operation"

// msgGetResponse is the stream message get API's answer.
type msgGetResponse struct {
	Message *struct {
		Subject  string    `json:"subject"`
		Sequence uint64    `json:"seq"`
		Header   []byte    `json:"hdrs"`
		Data     []byte    `json:"data"`
		Time     time.Time `json:"time"`
	} `json:"message"`
	Error *jetstream.APIError `json:"error"`
}

// leaderLast reads the last message on subject in stream through
// $JS.API.STREAM.MSG.GET, which only the stream's leader answers (the
// jetstream client would send a direct get when the stream allows them).
func (s *Store) leaderLast(ctx context.Context, stream, subject string) (*jetstream.RawStreamMsg, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, leaderGetTimeout)
		defer cancel()
	}
	req, _ := json.Marshal(map[string]string{"last_by_subj": subject})
	reply, err := s.js.Conn().RequestWithContext(ctx, jetstream.DefaultAPIPrefix+"STREAM.MSG.GET."+stream, req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = errors.Join(nats.ErrTimeout, err)
		}
		return nil, mapErr(err)
	}
	var resp msgGetResponse
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, fmt.Errorf("kvstate: message get on %s: %w", stream, err)
	}
	if resp.Error != nil {
		if resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound {
			return nil, ErrNotFound
		}
		return nil, errors.Join(ErrUnavailable, resp.Error)
	}
	if resp.Message == nil {
		return nil, fmt.Errorf("kvstate: message get on %s: empty answer", stream)
	}
	m := resp.Message
	out := &jetstream.RawStreamMsg{Subject: m.Subject, Sequence: m.Sequence, Data: m.Data, Time: m.Time}
	if len(m.Header) > 0 {
		if out.Header, err = nats.DecodeHeadersMsg(m.Header); err != nil {
			return nil, fmt.Errorf("kvstate: message get on %s: %w", stream, err)
		}
	}
	return out, nil
}
