package kvstate

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
)

// UseLeaderReads makes s read as on a replicated bucket (read.go).
func UseLeaderReads(s *Store) { s.leaderReads = true }

// FewReadRetries shortens the re-reads of stale reads for a test.
func FewReadRetries(t interface{ Cleanup(func()) }) {
	was := readRetries
	readRetries = 2
	t.Cleanup(func() { readRetries = was })
}

// CommitWay makes s commit every group of concurrent request writes one
// way, as if that way had always cost less.
func CommitWay(s *Store, singles bool) {
	c := chooser{batch: 1, single: 1 << 40}
	if singles {
		c = chooser{batch: 1 << 40, single: 1}
	}
	s.shards[0].commits.choice = c
}

// BatchesRefused counts the atomic batches of request writes the server
// refused whole.
func BatchesRefused(s *Store) int64 { return s.shards[0].commits.refused.Load() }

// Chooser exposes the commit-way chooser to its test.
type Chooser = chooser

// RequestChooser is the chooser of s's request writes (shard 0).
func RequestChooser(s *Store) *Chooser { return &s.shards[0].commits.choice }

// Ways to commit.
const (
	AsBatch   = asBatch
	AsSingles = asSingles
)

// Choose, ObserveBatch and ObserveSingles expose the chooser's methods.
func (c *Chooser) Choose(n int) (way, k int)    { return c.choose(n) }
func (c *Chooser) ObserveBatch(d time.Duration) { c.observeBatch(d) }
func (c *Chooser) ObserveSingles(first, spread time.Duration, n int) {
	c.observeSingles(first, spread, n)
}

// WithStored is r as its writer has it: with its stored bytes.
func WithStored(r Record, raw []byte) Record { r.raw = raw; return r }

// WriteRaw writes data to subject through s's request committer, as a
// request write goes, expecting no earlier message on it.
func WriteRaw(ctx context.Context, s *Store, subject string, data []byte) (uint64, error) {
	return s.shards[0].commits.write(ctx, &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}, 0)
}

// GateWrites sets what s's write probe last found (nil: writable), for
// every shard.
func GateWrites(s *Store, err error) {
	for _, sh := range s.shards {
		sh.gate.set(err)
	}
}

// Queued counts the request writes waiting for s's committer.
func Queued(s *Store) int {
	s.shards[0].commits.mu.Lock()
	defer s.shards[0].commits.mu.Unlock()
	return len(s.shards[0].commits.queue)
}

// PubAck and ErrNoStream expose the reading of a write's acknowledgement.
var (
	PubAck      = pubAck
	ErrNoStream = errNoStream
)

// ProbeSingles makes s's next group of request writes a probe of singles:
// batches measured, singles not yet.
func ProbeSingles(s *Store) { s.shards[0].commits.choice = chooser{batch: 1} }
