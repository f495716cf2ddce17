package heal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Wait bounds each look at a stream.
const Wait = 5 * time.Second

// Streams heals the derived streams configs on js. Safe for concurrent
// use.
type Streams struct {
	js       jetstream.JetStream
	configs  []jetstream.StreamConfig
	rederive func(ctx context.Context) error
	log      *slog.Logger

	mu      sync.Mutex
	created map[string]time.Time // each stream's creation time when last seen
}

// New returns the Streams that heal configs on js, and run rederive after
// one was re-created.
func New(js jetstream.JetStream, configs []jetstream.StreamConfig, rederive func(ctx context.Context) error, log *slog.Logger) *Streams {
	return &Streams{js: js, configs: configs, rederive: rederive, log: log}
}

// Heal makes sure every stream exists, re-creating any NATS lost, and
// runs rederive when one had to be re-created since it last looked, or
// always with force. It returns the first failure (and looks again, with
// the same decision to re-derive, at the next Heal).
func (s *Streams) Heal(ctx context.Context, force bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]time.Time, len(s.configs))
	rederive := force
	for _, sc := range s.configs {
		created, err := s.ensure(ctx, sc)
		if err != nil {
			return err
		}
		if was, ok := s.created[sc.Name]; ok && !was.Equal(created) {
			rederive = true
		}
		seen[sc.Name] = created
	}
	if rederive {
		if err := s.rederive(ctx); err != nil {
			return err
		}
	}
	s.created = seen
	return nil
}

// ensure returns the creation time of the stream sc, created if missing.
func (s *Streams) ensure(ctx context.Context, sc jetstream.StreamConfig) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	st, err := s.js.Stream(ctx, sc.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s.log.Warn("outbox: re-creating a derived stream that NATS lost", "stream", sc.Name)
		st, err = s.js.CreateOrUpdateStream(ctx, sc)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("outbox: stream %s: %w", sc.Name, err)
	}
	return st.CachedInfo().Created, nil
}
