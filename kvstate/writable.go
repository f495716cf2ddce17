package kvstate

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

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
// ErrUnavailable naming the first that has none or does not answer. Its
// answer also gates the store's request and idempotency writes when the
// buckets are replicated: while it is an error they are refused at once, and those waiting on an
// acknowledgement are answered ErrUnavailable (writeGate).
func (p *WriteProbe) Check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && time.Since(p.at) < p.every {
		return p.err
	}
	var shards []error
	shards, p.err = p.store.writable(ctx)
	p.at = time.Now()
	// Only replicated buckets elect leaders; and a caller gone is no news.
	if p.store.leaderReads && ctx.Err() == nil {
		for i, sh := range p.store.shards {
			sh.gate.set(shards[i])
		}
	}
	return p.err
}

// Run checks once every period until ctx ends, so that writes learn of a
// lost leader without waiting for /readyz to be asked; it returns nil.
func (p *WriteProbe) Run(ctx context.Context) error {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		_ = p.Check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// writeGate holds the last probe's answer for the committers. lost is
// closed when the answer turns to an error, and replaced when it clears.
type writeGate struct {
	mu   sync.Mutex
	err  error
	lost chan struct{}
}

func newWriteGate() *writeGate { return &writeGate{lost: make(chan struct{})} }

func (g *writeGate) set(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case err != nil && g.err == nil:
		close(g.lost)
	case err == nil && g.err != nil:
		g.lost = make(chan struct{})
	}
	g.err = err
}

// state is the last answer, and the channel closed when it next turns to
// an error (already closed while it is one).
func (g *writeGate) state() (<-chan struct{}, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lost, g.err
}

// lostErr is what a write waiting on an acknowledgement is told when the
// probe finds a bucket without a leader: its outcome is unknown.
func (g *writeGate) lostErr() error {
	_, err := g.state()
	if err == nil {
		err = ErrUnavailable
	}
	return fmt.Errorf("%w (this write may or may not have been stored; retry it with the same Idempotency-Key or expected revision)", err)
}

// writable probes every bucket a write needs and returns, for each
// shard, why its writes cannot be taken (nil: they can), and the first of
// those.
func (s *Store) writable(ctx context.Context) ([]error, error) {
	ctx, cancel := context.WithTimeout(ctx, writableTimeout)
	defer cancel()
	probe := func(b string) error {
		if s.leaderReads {
			if err := s.ledBy(ctx, StreamOf(b)); err != nil {
				return fmt.Errorf("%w: bucket %s %v", ErrUnavailable, b, err)
			}
			return nil
		}
		st, err := s.js.Stream(ctx, StreamOf(b))
		if err != nil {
			return fmt.Errorf("%w: bucket %s: %v", ErrUnavailable, b, err)
		}
		if c := st.CachedInfo().Cluster; c != nil && c.Leader == "" {
			return fmt.Errorf("%w: bucket %s has no leader", ErrUnavailable, b)
		}
		return nil
	}
	// A shard's writes need its buckets and the grants'; the first
	// bucket that cannot take a write is the answer.
	grants := probe(BucketGrants)
	shards := make([]error, len(s.shards))
	var first error
	for i, sh := range s.shards {
		shards[i] = grants
		for _, b := range []string{sh.reqBucket, sh.idmBucket} {
			if shards[i] == nil {
				shards[i] = probe(b)
			}
		}
		first = cmp.Or(first, shards[i])
	}
	return shards, first
}

// ledBy asks a replicated stream for its info and waits for the answer of
// its leader itself: the one that says since when it leads. Other
// replicas may answer too (a young group's preferred member does), naming
// the leader they last heard of, which may be gone: a node killed a moment
// ago still leads in its followers' eyes until they elect.
func (s *Store) ledBy(ctx context.Context, stream string) error {
	nc := s.js.Conn()
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf(": %v", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(jetstream.DefaultAPIPrefix+"STREAM.INFO."+stream, inbox, nil); err != nil {
		return fmt.Errorf(": %v", err)
	}
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return fmt.Errorf("has no leader that answers: %v", err)
		}
		var info struct {
			Error *struct {
				Description string `json:"description"`
			} `json:"error"`
			Cluster *struct {
				Leader      string            `json:"leader"`
				LeaderSince *time.Time        `json:"leader_since"`
				Replicas    []json.RawMessage `json:"replicas"`
			} `json:"cluster"`
		}
		if err := json.Unmarshal(msg.Data, &info); err != nil {
			continue
		}
		switch c := info.Cluster; {
		case info.Error != nil:
			return fmt.Errorf(": %s", info.Error.Description)
		case c == nil || len(c.Replicas) == 0:
			return nil // one replica: the one that answered leads
		case c.Leader == "":
			return fmt.Errorf("has no leader")
		case c.LeaderSince != nil:
			return nil
		}
	}
}
