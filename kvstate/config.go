package kvstate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/countersign/countersign/backoff"
	"github.com/nats-io/nats.go/jetstream"
)

// configKey is the one key of BucketConfig: its revisions are the
// config's (SPEC §10 "Changing the config without a restart").
const configKey = "file"

// configHistory is how many revisions of the file the bucket keeps.
const configHistory = 16

// ConfigRevision is one revision of the config file as stored: the file's
// bytes as read, tokens included (the bucket is reachable by countersign's
// own connections only).
type ConfigRevision struct {
	// Revision is the KV revision it was stored at.
	Revision uint64
	// SHA256 is the lowercase hex SHA-256 of Raw.
	SHA256 string
	// AppliedAt is when it was stored.
	AppliedAt time.Time
	// Raw is the file.
	Raw []byte
}

// ConfigSHA256 is the lowercase hex SHA-256 of a config file's bytes.
func ConfigSHA256(raw []byte) string {
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:])
}

// PublishConfig stores raw as the config's next revision, unless it is the
// running revision already (then it returns that one, and false). A file
// stored by another process meanwhile is compared again, so that the same
// file published by several processes is stored once. raw must have been
// validated by the caller. It returns ErrUnavailable when NATS does not
// answer.
func (s *Store) PublishConfig(ctx context.Context, raw []byte) (ConfigRevision, bool, error) {
	for attempt := 0; attempt < 5; attempt++ {
		cur, err := s.RunningConfig(ctx)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return ConfigRevision{}, false, err
		}
		if err == nil && bytes.Equal(cur.Raw, raw) {
			return cur, false, nil
		}
		rev, err := s.config.Update(ctx, configKey, raw, cur.Revision)
		if err = mapErr(err); errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return ConfigRevision{}, false, fmt.Errorf("kvstate: publish config: %w", err)
		}
		return ConfigRevision{Revision: rev, SHA256: ConfigSHA256(raw), AppliedAt: time.Now(), Raw: raw}, true, nil
	}
	return ConfigRevision{}, false, fmt.Errorf("kvstate: publish config: %w", ErrConflict)
}

// RunningConfig reads the config's latest revision; ErrNotFound when none
// was ever stored.
func (s *Store) RunningConfig(ctx context.Context) (ConfigRevision, error) {
	e, err := s.config.Get(ctx, configKey)
	if err != nil {
		return ConfigRevision{}, mapErr(err)
	}
	return configRevision(e), nil
}

// WatchConfig calls apply with the config's latest revision, then with
// each new one as it is stored, until ctx ends; it returns nil then. A
// watch that cannot be made or that ends (a cluster electing the bucket's
// leader, NATS restarting) is made again after a pause (configRetry),
// from the latest revision, so apply may be told a revision it has
// applied already. apply runs on one goroutine, in revision order.
func (s *Store) WatchConfig(ctx context.Context, apply func(ConfigRevision)) error {
	for n := 1; ; n++ {
		if s.watchConfig(ctx, apply) {
			n = 1 // it ran: the next failure starts the pauses over
		}
		if backoff.Sleep(ctx, configRetry.Delay(n)) != nil {
			return nil
		}
	}
}

// configRetry spaces the attempts to watch the config again: 0.25 s
// doubling to 5 s.
var configRetry = backoff.Policy{Base: 250 * time.Millisecond, Max: 5 * time.Second}

// watchConfig runs one watch until it ends or ctx does, and reports
// whether it was made.
func (s *Store) watchConfig(ctx context.Context, apply func(ConfigRevision)) bool {
	w, err := s.config.Watch(ctx, configKey)
	if err != nil {
		return false
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return true
		case e, ok := <-w.Updates():
			if !ok {
				return true
			}
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				apply(configRevision(e))
			}
		}
	}
}

func configRevision(e jetstream.KeyValueEntry) ConfigRevision {
	return ConfigRevision{Revision: e.Revision(), SHA256: ConfigSHA256(e.Value()), AppliedAt: e.Created(), Raw: e.Value()}
}
