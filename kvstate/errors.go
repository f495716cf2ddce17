package kvstate

import (
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Sentinel errors.
var (
	// ErrConflict: the key changed since it was read (a lost compare-and-set).
	ErrConflict = errors.New("kvstate: revision conflict")
	// ErrNotFound: no such key.
	ErrNotFound = errors.New("kvstate: not found")
	// ErrExists: a create found the key already there.
	ErrExists = errors.New("kvstate: already exists")
	// ErrIllegal: the change is not in the table of legal moves.
	ErrIllegal = errors.New("kvstate: illegal transition")
	// ErrStale: a mirror's watcher is down or has not caught up (after a
	// reconnect, until its new watcher has delivered what it missed).
	ErrStale = errors.New("kvstate: watcher not current")
	// ErrUnavailable: NATS or JetStream did not answer.
	ErrUnavailable = errors.New("kvstate: NATS unavailable")
)

// MapErr turns jetstream errors into this package's sentinels, for the
// read model (package views) that watches the buckets.
func MapErr(err error) error { return mapErr(err) }

// mapErr turns jetstream errors into this package's sentinels.
func mapErr(err error) error {
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted), errors.Is(err, jetstream.ErrMsgNotFound):
		return ErrNotFound
	case errors.Is(err, jetstream.ErrKeyExists):
		return ErrConflict
	case errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant):
		return ErrConflict
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders), errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, nats.ErrDisconnected),
		errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, nats.ErrConnectionReconnecting):
		return errors.Join(ErrUnavailable, err)
	}
	return err
}
