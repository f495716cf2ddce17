package rpc

import (
	"sync"

	"github.com/countersign/countersign/events"
)

// watchers counts this process's live session subscriptions, per tenant
// and session: a protected write is decided only while one exists. The
// count is per process: a client subscribed through another countersign
// process does not count here.
type watchers struct {
	mu sync.Mutex
	n  map[string]int
}

func newWatchers() *watchers { return &watchers{n: map[string]int{}} }

func watchKey(tenant events.TenantID, session string) string {
	return string(tenant) + "\x00" + session
}

func (w *watchers) add(keys []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		w.n[k]++
	}
}

func (w *watchers) remove(keys []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		if w.n[k]--; w.n[k] <= 0 {
			delete(w.n, k)
		}
	}
}

// watched reports whether a client of this process is subscribed to
// session of tenant.
func (w *watchers) watched(tenant events.TenantID, session string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return session != "" && w.n[watchKey(tenant, session)] > 0
}
