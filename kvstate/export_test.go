package kvstate

import (
	"time"
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
	s.commits.choice = c
}

// BatchesRefused counts the atomic batches of request writes the server
// refused whole.
func BatchesRefused(s *Store) int64 { return s.commits.refused.Load() }

// Chooser exposes the commit-way chooser to its test.
type Chooser = chooser

// Ways to commit.
const (
	AsBatch   = asBatch
	AsSingles = asSingles
)

// Choose and Observe expose the chooser's methods.
func (c *Chooser) Choose(n int) int                        { return c.choose(n) }
func (c *Chooser) Observe(way int, d time.Duration, n int) { c.observe(way, d, n) }

// WithStored is r as its writer has it: with its stored bytes.
func WithStored(r Record, raw []byte) Record { r.raw = raw; return r }
