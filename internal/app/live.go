package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/internal/broker"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
	"github.com/prometheus/client_golang/prometheus"
)

// live keeps the process on the running config revision (SPEC §10
// "Changing the config without a restart"): it stores the file in KV
// bucket config when it changes (Reload, and the file's stat loop), and
// applies every revision stored there, by any process, that loads.
// Applying swaps the tenants, rebuilds the judges and closes the bus
// connections whose token was removed or changed, and those of subagents
// registered under an agent the revision removed; then it ends what every
// token or session that no longer authenticates as it did holds in this
// process (approvals.Service.RevokeStale: long-polls answer 401, event
// streams end, /v1/rpc WebSockets close with 4401). Every process applies
// every revision through the bucket's watch, so this reaches them all.
type live struct {
	file     string         // the config file; "" (the demo): live config is off
	process  *config.Config // what the process started with: its flags' settings hold for every revision
	store    *kvstate.Store
	views    *views.Views
	svc      *approvals.Service // its holds are revoked on apply
	broker   *broker.Broker
	judges   *rulesJudge
	log      *slog.Logger
	failures prometheus.Counter
	running  atomic.Pointer[kvstate.ConfigRevision] // Raw dropped
	first    chan struct{}                          // closed once a revision was applied or refused
	once     sync.Once
	reload   sync.Mutex // one Reload at a time
	applying sync.Mutex // one apply at a time, in revision order
	// applied are called after each revision is applied: what was derived
	// from the config before it (armed timers, retention sweeps) is
	// derived again.
	applied []func()
	// stored are called (under reload) after Reload stored and applied a
	// new revision: work one process does for each revision.
	stored []func(ctx context.Context)
}

// liveConfig is what live is built from.
type liveConfig struct {
	file    string
	process *config.Config
	store   *kvstate.Store
	svc     *approvals.Service
	broker  *broker.Broker
	judges  *rulesJudge
	applied []func()
	stored  []func(ctx context.Context)
}

// fileEvery is how often the config file is looked at for a change.
const fileEvery = 500 * time.Millisecond

func newLive(c liveConfig, reg prometheus.Registerer, log *slog.Logger) *live {
	l := &live{file: c.file, process: c.process, store: c.store, views: c.svc.Views(), svc: c.svc, broker: c.broker, judges: c.judges,
		applied: c.applied, stored: c.stored, log: log, first: make(chan struct{}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "countersign_config_reload_failures_total",
			Help: "Config files (or stored revisions) that did not load, and so changed nothing."})}
	_ = reg.Register(l.failures)
	return l
}

// start stores the file this process started with (when it differs from
// the running revision) and applies the running revision before it
// returns; then it follows the bucket and the file until ctx ends.
func (l *live) start(ctx, wctx context.Context, workers interface{ Go(func() error) }) error {
	if l.file == "" {
		return nil
	}
	if err := l.Reload(ctx); err != nil {
		return err
	}
	workers.Go(func() error { return l.store.WatchConfig(wctx, l.apply) })
	workers.Go(func() error { l.watchFile(wctx); return nil })
	select {
	case <-l.first:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reload reads the file and, when it loads, stores it as the config's next
// revision (every process then applies it). A file that does not load
// changes nothing: the error is logged, counted and returned.
func (l *live) Reload(ctx context.Context) error {
	if l.file == "" {
		l.log.Warn("no config file to reload: the demo tenant is fixed")
		return errors.New("app: no config file to reload (the demo tenant)")
	}
	l.reload.Lock()
	defer l.reload.Unlock()
	raw, err := os.ReadFile(l.file)
	if err == nil {
		_, err = l.load(raw) // Check's verdict: what serve and config check say of it
	}
	if err != nil {
		l.failures.Inc()
		l.log.Error("config not reloaded; the running revision stays", "file", l.file, "err", err)
		return fmt.Errorf("app: reload %s: %w", l.file, err)
	}
	rev, stored, err := l.store.PublishConfig(ctx, raw)
	if err != nil {
		return err
	}
	if stored {
		l.log.Info("config stored", "revision", rev.Revision, "sha256", rev.SHA256)
	}
	l.apply(rev) // here at once; the watcher brings it to the others
	if stored {
		for _, f := range l.stored {
			f(ctx)
		}
	}
	return nil
}

// apply switches the process to rev. A revision that does not load here
// (a variable it names is unset in this process, say) changes nothing and
// is counted.
func (l *live) apply(rev kvstate.ConfigRevision) {
	defer l.once.Do(func() { close(l.first) })
	l.applying.Lock()
	defer l.applying.Unlock()
	if r := l.running.Load(); r != nil && r.Revision >= rev.Revision {
		return // applied already (by Reload, or by the watcher)
	}
	tenants, err := l.load(rev.Raw)
	if err != nil {
		l.failures.Inc()
		l.log.Error("config revision not applied; the running one stays", "revision", rev.Revision, "err", err)
		return
	}
	before := l.views.Tenants()
	l.views.SetTenants(tenants)
	l.judges.set(tenants)
	rev.Raw = nil
	l.running.Store(&rev)
	for _, f := range l.applied {
		f()
	}
	changed, gone := changedTokens(before, tenants), agentGone(l.views)
	dropped := l.broker.Disconnect(func(t domain.TenantID, p domain.Ref) bool { return changed(t, p) || gone(t, p) })
	ended := l.svc.RevokeStale()
	l.log.Info("config applied", "revision", rev.Revision, "sha256", rev.SHA256, "bus_connections_closed", dropped, "held_ended", ended)
}

// load parses raw and runs Check on it as this process runs it: the
// settings a restart alone changes (listen addresses, data, nats_url,
// roles; flags override them) are the process's, not the revision's.
func (l *live) load(raw []byte) ([]*domain.Tenant, error) {
	cfg, err := config.Parse(raw)
	if err != nil {
		return nil, err
	}
	if p := l.process; p != nil {
		cfg.Listen, cfg.DataDir, cfg.NATSURL, cfg.NATSListen, cfg.Roles = p.Listen, p.DataDir, p.NATSURL, p.NATSListen, p.Roles
	}
	c, err := check(cfg)
	return c.tenants, err
}

// Status is the running revision; zero without a config file.
func (l *live) Status() httpapi.ConfigStatus {
	r := l.running.Load()
	if r == nil {
		return httpapi.ConfigStatus{}
	}
	return httpapi.ConfigStatus{Revision: r.Revision, SHA256: r.SHA256, AppliedAt: r.AppliedAt.UTC()}
}

// watchFile reloads when the file's size or modification time changes.
func (l *live) watchFile(ctx context.Context) {
	last, _ := os.Stat(l.file)
	t := time.NewTicker(fileEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fi, err := os.Stat(l.file)
		if err != nil || (last != nil && fi.Size() == last.Size() && fi.ModTime().Equal(last.ModTime())) {
			continue
		}
		last = fi
		_ = l.Reload(ctx) // logged and counted there
	}
}

// changedTokens names the principals one of whose tokens was removed, or
// kept with other scopes, from before to after: a bus connection keeps the
// permissions it got at connect, so theirs are closed (the clients whose
// token still holds reconnect).
func changedTokens(before, after []*domain.Tenant) func(domain.TenantID, domain.Ref) bool {
	kept := map[domain.TenantID][]domain.Token{}
	for _, t := range after {
		kept[t.ID] = t.Tokens
	}
	drop := map[string]bool{}
	for _, t := range before {
		for _, tok := range t.Tokens {
			if !slices.ContainsFunc(kept[t.ID], func(k domain.Token) bool { return sameToken(k, tok) }) {
				drop[principalKey(t.ID, tok.Principal)] = true
			}
		}
	}
	return func(t domain.TenantID, p domain.Ref) bool { return drop[principalKey(t, p)] }
}

func principalKey(t domain.TenantID, p domain.Ref) string {
	return string(t) + "/" + p.Kind + ":" + p.ID
}

func sameToken(a, b domain.Token) bool {
	return a.SHA256 == b.SHA256 && a.Principal == b.Principal && slices.Equal(a.Scopes, b.Scopes)
}

// Reload stores the config file as the next revision when it loads (on
// SIGHUP); every process applies it within a second. A file that does not
// load changes nothing; its error is logged, counted and returned.
func (a *App) Reload(ctx context.Context) error { return a.live.Reload(ctx) }

// Config is the running config revision (GET /v1/config).
func (a *App) Config() httpapi.ConfigStatus { return a.live.Status() }
