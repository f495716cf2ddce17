package kvstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// acks routes the committer's acknowledgements. Each write (or atomic
// batch) is published with a reply subject of its own under one inbox; the
// one subscription on that inbox hands each acknowledgement to the channel
// of the write waiting on it, and drops those nobody waits on any more. A
// write so published costs no goroutine of its own, so writes can be
// pipelined from one goroutine, and a write alone sent from its caller's.
type acks struct {
	nc *nats.Conn

	mu      sync.Mutex
	sub     *nats.Subscription
	prefix  string // the inbox, and a dot
	next    uint64
	waiting map[string]chan *nats.Msg
}

// expect returns a fresh reply subject and the channel its one
// acknowledgement arrives on. The caller that stops waiting calls forget.
func (a *acks) expect() (reply string, ack <-chan *nats.Msg, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sub == nil {
		prefix := a.nc.NewInbox() + "."
		a.prefix, a.waiting = prefix, map[string]chan *nats.Msg{}
		sub, err := a.nc.Subscribe(prefix+"*", a.deliver)
		if err != nil {
			return "", nil, fmt.Errorf("kvstate: acknowledgements: %w", err)
		}
		a.sub = sub
	}
	a.next++
	token := strconv.FormatUint(a.next, 36)
	ch := make(chan *nats.Msg, 1)
	a.waiting[token] = ch
	return a.prefix + token, ch, nil
}

// forget drops the wait for reply's acknowledgement.
func (a *acks) forget(reply string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.waiting, reply[len(a.prefix):])
}

func (a *acks) deliver(m *nats.Msg) {
	a.mu.Lock()
	token := m.Subject[len(a.prefix):]
	ch, ok := a.waiting[token]
	delete(a.waiting, token)
	a.mu.Unlock()
	if ok {
		ch <- m
	}
}

// errNoStream is an acknowledgement from no stream: no responders (the
// stream has no leader just now), answered by nats-server for it.
var errNoStream = errors.New("kvstate: no stream answered")

// pubAck reads a single write's acknowledgement: its stream sequence, or
// the stream's refusal (mapErr), or errNoStream.
func pubAck(m *nats.Msg) (uint64, error) {
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		return 0, errNoStream
	}
	var ack struct {
		Stream string              `json:"stream"`
		Seq    uint64              `json:"seq"`
		Error  *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &ack); err != nil {
		return 0, fmt.Errorf("kvstate: acknowledgement: %w", err)
	}
	if ack.Error != nil {
		return 0, mapErr(ack.Error)
	}
	if ack.Stream == "" {
		return 0, fmt.Errorf("kvstate: acknowledgement without a stream: %q", m.Data)
	}
	return ack.Seq, nil
}
