package rpc

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
)

// Watchers counts the live session subscriptions of this process's
// clients, per tenant and session, and answers for every process whether
// a session is watched (approvals.Watchers): a protected write is
// answered, on any surface, only while one is.
//
// While a client of this process watches a session, the process holds a
// core NATS subscription on the session's events.WatchSubject and
// replies to whoever asks. Watched counts this process's clients first;
// otherwise it asks the bus with one request: a reply means watched;
// no responders, no answer within the timeout, or no connection mean
// unwatched (it fails closed). Only countersign's own connections may
// use the subject (internal/broker grants it to no token).
type Watchers struct {
	nc      *nats.Conn
	timeout time.Duration
	log     *slog.Logger
	mu      sync.Mutex
	n       map[string]int                // by watch subject
	subs    map[string]*nats.Subscription // by watch subject, while n > 0
}

var _ approvals.Watchers = (*Watchers)(nil)

// DefaultWatchTimeout bounds asking the other processes; a process that
// holds the subject answers at once.
const DefaultWatchTimeout = 2 * time.Second

// NewWatchers returns the watchers of one process, shared between other
// processes through nc (nil: this process's clients only). A timeout of
// 0 is DefaultWatchTimeout; a nil log is slog.Default().
func NewWatchers(nc *nats.Conn, timeout time.Duration, log *slog.Logger) *Watchers {
	if log == nil {
		log = slog.Default()
	}
	return &Watchers{nc: nc, timeout: orDefault(timeout, DefaultWatchTimeout), log: log,
		n: map[string]int{}, subs: map[string]*nats.Subscription{}}
}

func watchKey(tenant domain.TenantID, session string) string {
	return events.WatchSubject(tenant, session)
}

// add counts keys once more each; a key watched for the first time is
// subscribed, and the server has the subscription when add returns.
func (w *Watchers) add(keys []string) {
	w.mu.Lock()
	subscribed := false
	for _, k := range keys {
		if w.n[k]++; w.n[k] == 1 && w.nc != nil {
			sub, err := w.nc.Subscribe(k, w.reply)
			if err != nil {
				w.log.Warn("rpc: watch subscription failed; the session counts as watched here only", "err", err)
				continue
			}
			w.subs[k], subscribed = sub, true
		}
	}
	w.mu.Unlock()
	if subscribed {
		if err := w.nc.FlushTimeout(w.timeout); err != nil {
			w.log.Warn("rpc: watch subscription not confirmed", "err", err)
		}
	}
}

func (w *Watchers) remove(keys []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		if w.n[k]--; w.n[k] > 0 {
			continue
		}
		delete(w.n, k)
		if sub := w.subs[k]; sub != nil {
			_ = sub.Unsubscribe()
			delete(w.subs, k)
		}
	}
}

// reply answers another process's question while a client here still
// watches the session.
func (w *Watchers) reply(m *nats.Msg) {
	if w.local(m.Subject) {
		_ = m.Respond([]byte("watched"))
	}
}

func (w *Watchers) local(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[key] > 0
}

// Watched reports whether a client of any process is subscribed to
// session of tenant: this process's clients first, then one request on
// the bus. It fails closed (false) when it cannot tell.
func (w *Watchers) Watched(ctx context.Context, tenant domain.TenantID, session string) bool {
	if session == "" {
		return false
	}
	key := watchKey(tenant, session)
	if w.local(key) {
		return true
	}
	if w.nc == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	_, err := w.nc.RequestWithContext(ctx, key, nil)
	return err == nil
}
