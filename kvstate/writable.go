package kvstate

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// writeBuckets are the buckets a write needs: submit, answer, cancel and
// claim write requests and idempotency keys, and answers write grants.
var writeBuckets = []string{BucketRequests, BucketIdempotency, BucketGrants}

// writableTimeout bounds one probe: a stream whose leader is gone may not
// answer at all.
const writableTimeout = time.Second

// WriteProbe tells whether a write can be taken now: every bucket a write
// needs has a stream leader (on a cluster, a stream has none for a few
// seconds after its leader's node is lost). It asks NATS at most once per
// its period, one stream info request per bucket, and answers the calls
// between from that. Safe for concurrent use.
type WriteProbe struct {
	store *Store
	every time.Duration
	mu    sync.Mutex
	at    time.Time
	err   error
}

// WriteProbe returns a probe that asks at most once every period.
func (s *Store) WriteProbe(every time.Duration) *WriteProbe {
	return &WriteProbe{store: s, every: every}
}

// Check returns nil when every bucket a write needs has a leader, else
// ErrUnavailable naming the first that has none or does not answer.
func (p *WriteProbe) Check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && time.Since(p.at) < p.every {
		return p.err
	}
	p.err = p.store.writable(ctx)
	p.at = time.Now()
	return p.err
}

func (s *Store) writable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, writableTimeout)
	defer cancel()
	for _, b := range writeBuckets {
		st, err := s.js.Stream(ctx, StreamOf(b))
		if err != nil {
			return fmt.Errorf("%w: bucket %s: %v", ErrUnavailable, b, err)
		}
		if c := st.CachedInfo().Cluster; c != nil && c.Leader == "" {
			return fmt.Errorf("%w: bucket %s has no leader", ErrUnavailable, b)
		}
	}
	return nil
}
