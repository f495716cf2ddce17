package audit

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

// Batch headers as the server stores them with each message of an atomic
// batch.
const (
	hdrBatchID     = "Nats-Batch-Id"
	hdrBatchSeq    = "Nats-Batch-Sequence"
	hdrBatchCommit = "Nats-Batch-Commit"
)

// DropPartialBatch removes from the audit stream the messages of a batch
// that a crash left half-applied, and returns how many it removed.
//
// The server applies an atomic batch to the stream only once it holds
// all of it, and serves no read until the whole batch is applied; if the
// machine stops half-way, the next start applies the rest from the
// batch's staged copy. When that copy is gone (the embedded server
// stages the audit stream's batches in memory: internal/broker's
// staging.go), the stream ends with some of a batch's entries and tree
// messages and not its cursor: the logs would count entries the cursor
// does not, and the writer would project them again. A half-applied
// batch is recognised by its last message, the stream's, which carries a
// batch ID and no commit; its messages, stored together, are the ones
// just before it with the same ID. Once removed, the stream is as if the
// batch had never been sent, and the writer sends it again.
//
// Call it before the process reads the logs or runs a writer (a Log keeps
// what it read). On a server that is running it finds nothing, since a
// batch under way is not visible: it is safe to call at any start.
func DropPartialBatch(ctx context.Context, js jetstream.JetStream) (int, error) {
	st, err := js.Stream(ctx, Stream)
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	last, err := lastMsg(ctx, st)
	if last == nil || err != nil {
		return 0, err
	}
	id := last.Header.Get(hdrBatchID)
	k, _ := strconv.ParseUint(last.Header.Get(hdrBatchSeq), 10, 64)
	if id == "" || k == 0 || last.Header.Get(hdrBatchCommit) != "" || k > last.Sequence {
		return 0, nil
	}
	dropped := 0
	for seq := last.Sequence - k + 1; seq <= last.Sequence; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return dropped, fmt.Errorf("audit: partial batch: %d: %w", seq, err)
		}
		if m.Header.Get(hdrBatchID) != id {
			continue
		}
		if err := st.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return dropped, fmt.Errorf("audit: partial batch: %d: %w", seq, err)
		}
		dropped++
	}
	return dropped, nil
}

// maxBatchMsgs is the most messages the server takes in one atomic batch.
const maxBatchMsgs = 1000

// lastMsg returns the stream's last message, nil if none: the last
// sequence's, or the one before it that is still stored when the last
// ones were removed (by DropPartialBatch, say). It looks no further back
// than a batch.
func lastMsg(ctx context.Context, st jetstream.Stream) (*jetstream.RawStreamMsg, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	last := info.State.LastSeq
	for seq := last; seq >= max(info.State.FirstSeq, 1) && last-seq < maxBatchMsgs; seq-- {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("audit: message %d: %w", seq, err)
		}
		return m, nil
	}
	return nil, nil
}
