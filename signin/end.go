package signin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// EndWhere ends every stored session that gone names (those of a member a
// config change removed, say) and says how many it ended. A session that
// cannot be read is left to its TTL.
func (st *Store) EndWhere(ctx context.Context, gone func(Session) bool) (int, error) {
	keys, err := st.sessions.ListKeys(ctx)
	if err != nil {
		return 0, fmt.Errorf("signin: list sessions: %w", err)
	}
	n := 0
	for k := range keys.Keys() {
		e, err := st.sessions.Get(ctx, k)
		if err != nil {
			continue // gone meanwhile, or unreadable: its TTL ends it
		}
		var s Session
		if json.Unmarshal(e.Value(), &s) != nil || !gone(s) {
			continue
		}
		if err := st.sessions.Purge(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return n, fmt.Errorf("signin: end session: %w", err)
		}
		n++
	}
	return n, nil
}

// WatchEnded calls ended with the ID (Session.ID) of each session ended
// from now on, by any process (End, EndWhere), until ctx ends; then it
// returns nil. It returns an error only if the watch cannot start.
func (st *Store) WatchEnded(ctx context.Context, ended func(id string)) error {
	w, err := st.sessions.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.MetaOnly())
	if err != nil {
		return fmt.Errorf("signin: watch sessions: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return nil
			}
			if e != nil && e.Operation() != jetstream.KeyValuePut {
				ended(e.Key())
			}
		}
	}
}
