package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/busapi"
	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/httpapi/rpc"
	"github.com/countersign/countersign/internal/broker"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/notify"
	"github.com/countersign/countersign/outbox"
	"github.com/countersign/countersign/views"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
)

// Options for Start.
type Options struct {
	Config *config.Config
	Logger *slog.Logger
	// Listener, if set, is served instead of listening on Config.Listen.
	Listener net.Listener
	// Clock is the time the use cases and the timers go by (deadlines,
	// approval TTLs, review timeouts). Default clock.System; tests
	// step a testutil.Clock.
	Clock clock.Clock
	// Notify bounds webhook delivery; zero fields keep the defaults
	// (tests shorten the backoff).
	Notify notify.Tuning
	// ConfigFile is the file Config was loaded from: the process stores
	// it in KV bucket config and follows the revisions stored there
	// (live.go). Empty (the demo tenant): the config is fixed at start.
	ConfigFile string
	// NoAudit runs no audit writer (bench --audit off measures the audit
	// log's cost). Default: every deciders process runs one.
	NoAudit bool
}

// App is a running process.
type App struct {
	Service  *approvals.Service
	Broker   *broker.Broker
	Registry *prometheus.Registry
	log      *slog.Logger
	http     *http.Server
	api      *httpapi.API
	ln       net.Listener
	checks   []func() error  // readiness beyond NATS answering; no I/O
	group    *deciders.Group // the live deciders processes (deciders role)

	shutdown    sync.Once
	shutdownErr error
	started     atomic.Bool // the start has finished: ready may say so
	writable    *kvstate.WriteProbe
	views       *views.Views
	cancel      context.CancelFunc
	workers     *errgroup.Group
	wctx        context.Context // the workers' context: ended by the first that fails, with its error as cause
	served      chan error
	watch       *rpc.Watchers
	live        *live
	audit       *httpapi.AuditConfig // the API's audit log (SPEC §14)
}

// Start brings up everything the configured roles need and returns once
// the HTTP listener (if any) accepts connections. A config Check refuses
// is refused with Check's error before anything starts.
func Start(ctx context.Context, o Options) (*App, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	cfg := o.Config
	c, err := check(cfg) // the one validation (Check), before anything starts
	if err != nil {
		return nil, err
	}
	// The HTTP port first: one that is taken fails the start at once,
	// before NATS and the views start.
	var own net.Listener // closed if the start fails
	if has(cfg.Roles, "api") && o.Listener == nil {
		if own, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, fmt.Errorf("app: %w", broker.PortTaken("http", cfg.Listen, err))
		}
		o.Listener = own
	}
	b, err := broker.Start(ctx, broker.Config{URLs: cfg.NATSURL, DataDir: cfg.DataDir, Logger: o.Logger,
		Listen: cfg.NATSListen, Replicas: cfg.Replicas, CalloutSeed: c.seed})
	if err != nil {
		closeOwn(own)
		return nil, err
	}
	a, err := assemble(ctx, o, b, c.tenants)
	if err != nil {
		b.Close()
		closeOwn(own)
		return nil, err
	}
	return a, nil
}

func closeOwn(ln net.Listener) {
	if ln != nil {
		_ = ln.Close()
	}
}

func assemble(ctx context.Context, o Options, b *broker.Broker, tenants []*events.Tenant) (*App, error) {
	if err := declareStreams(ctx, b); err != nil {
		return nil, err
	}
	shards := kvstate.WithShards(max(o.Config.RequestShards, 1))
	store, err := kvstate.Open(ctx, b.JS, b.Replicas, shards)
	if err != nil {
		return nil, err
	}
	// The group-committed buckets' batches are staged in memory (before
	// the first batch is sent): it saves the server five syncs a batch.
	if root, err := b.StageBatchesInMemory(store.ShardedStreams()...); err != nil {
		o.Logger.Warn("atomic batches: some are staged on disk", "err", err)
	} else if root != "" {
		o.Logger.Debug("atomic batches: staged in memory", "under", root)
	}
	// The mirrors' watchers get a connection of their own.
	watchJS, err := b.Connect("watchers")
	if err != nil {
		return nil, err
	}
	watchStore, err := kvstate.Open(ctx, watchJS, b.Replicas, shards)
	if err != nil {
		return nil, err
	}
	vw := views.NewViews(watchStore, tenants, views.WithLogger(o.Logger))
	reg := prometheus.NewRegistry()
	judges := newRulesJudge(tenants, reg, o.Logger)
	checker := &deciders.Checker{Views: vw, Judge: judges, Rules: approvals.Rules(vw)}
	// The watched sessions (protected writes) are shared on a connection of their own.
	watchNC, err := b.Connect("rpc-watchers")
	if err != nil {
		return nil, err
	}
	watch := rpc.NewWatchers(watchNC.Conn(), 0, o.Logger)
	svc, err := approvals.New(approvals.Config{Store: store, Views: vw, Checker: checker, Now: o.Clock.Now, Logger: o.Logger, MaxLongPolls: o.Config.MaxLongPolls, Registry: reg,
		Watchers: watch})
	if err != nil {
		return nil, err
	}
	dropRetired(b, vw, svc)
	a := &App{Service: svc, Broker: b, Registry: reg, log: o.Logger, served: make(chan error, 1), watch: watch, checks: []func() error{vw.Current}, views: vw,
		live: newLive(o.ConfigFile, o.Config, store, svc, b, judges, reg, o.Logger)}
	wctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.writable = store.WriteProbe(writeProbeEvery)
	a.workers, wctx = errgroup.WithContext(wctx)
	a.wctx = wctx
	a.workers.Go(func() error { return a.writable.Run(wctx) })
	if has(o.Config.Roles, "deciders") {
		workJS, err := b.Connect("deciders")
		if err != nil {
			return nil, err
		}
		if err := a.startDeciders(wctx, workJS, vw, svc, judges, o.Clock); err != nil { // registers its mirror hooks first
			a.stopWorkers()
			return nil, err
		}
		if err := a.startNotify(wctx, o, workJS); err != nil {
			a.stopWorkers()
			return nil, err
		}
		if err := a.startAudit(wctx, vw, o.NoAudit); err != nil {
			a.stopWorkers()
			return nil, err
		}
	}
	a.workers.Go(func() error { return vw.Run(wctx) })
	a.workers.Go(func() error { vw.Snapshots().Keep(wctx, views.SnapshotEvery); return nil })
	if err := vw.WaitReady(ctx); err != nil {
		a.stopWorkers()
		return nil, err
	}
	if _, err := svc.EndBarredDelegations(ctx); err != nil { // stored before authority was bound to one member
		a.stopWorkers()
		return nil, fmt.Errorf("app: end delegated work across members: %w", err)
	}
	if err := a.live.start(ctx, wctx, a.workers); err != nil {
		a.stopWorkers()
		return nil, err
	}
	if err := b.SetAuthenticator(vw); err != nil { // tenant tokens on the bus, checked like HTTP's
		a.stopWorkers()
		return nil, err
	}
	if has(o.Config.Roles, "api") {
		var err error
		if a.audit, err = auditAPI(ctx, b.JS, o.Config, a); err == nil {
			err = a.serve(ctx, o, svc, reg)
		}
		if err == nil {
			if err = a.serveBus(ctx, wctx, b, svc); err != nil {
				_ = a.http.Close()
			}
		}
		if err != nil {
			a.stopWorkers()
			return nil, err
		}
	}
	a.started.Store(true)
	return a, nil
}

// dropRetired closes the bus connections of agents retired (or removed)
// after they connected: their tokens are refused from then on, on the bus
// as over HTTP.
func dropRetired(b *broker.Broker, views *views.Views, svc *approvals.Service) {
	mirror := views.AgentMirror()
	gone := agentGone(views)
	mirror.OnChange(func(_ string, a events.Agent, deleted bool) {
		select {
		case <-mirror.Ready(): // not while replaying at start: nobody is connected yet
		default:
			return
		}
		if deleted || a.RetiredAt != nil {
			b.Disconnect(gone)
			svc.RevokeStale() // its held long-polls, streams and WebSockets end too
		}
	})
}

// agentGone names the agents whose tokens no longer authenticate: gone,
// or retired (with an agent above them).
func agentGone(views *views.Views) func(events.TenantID, events.Ref) bool {
	return func(t events.TenantID, p events.Ref) bool {
		if p.Kind != events.KindAgent {
			return false
		}
		_, ok := views.Agent(t, events.AgentID(p.ID))
		return !ok || views.Retired(t, events.AgentID(p.ID))
	}
}

func (a *App) startDeciders(ctx context.Context, js jetstream.JetStream, views *views.Views, svc *approvals.Service, judges *rulesJudge, clock clock.Clock) error {
	group, err := deciders.NewGroup(ctx, deciders.GroupConfig{JS: js, Replicas: a.Broker.Replicas, Logger: a.log})
	if err != nil {
		return err
	}
	a.group = group
	timers, err := deciders.NewTimers(deciders.TimersConfig{Views: views, Act: svc, Group: group, Logger: a.log, Clock: clock})
	if err != nil {
		return err
	}
	views.Requests().OnChange(timers.Observe)
	offers, err := deciders.NewOffers(deciders.OffersConfig{Conn: js.Conn(), Views: views, Store: svc.Store(), Logger: a.log, Clock: clock})
	if err != nil {
		return err
	}
	views.Requests().OnChange(offers.Observe)
	ob, err := outbox.New(outbox.Config{JS: js, Store: svc.Store(), Views: views, Grants: svc, Logger: a.log, Streams: events.StreamConfigs(a.Broker.Replicas)})
	if err != nil {
		return err
	}
	worker, err := deciders.NewWorker(deciders.WorkerConfig{JS: js, Offers: offers, Logger: a.log})
	if err != nil {
		return err
	}
	a.checks = append(a.checks, ob.Healthy, worker.Healthy)
	a.workers.Go(func() error { return timers.Run(ctx) })
	a.workers.Go(func() error { return group.Run(ctx) })
	sweeper, err := deciders.NewSweeper(deciders.SweeperConfig{JS: js, Tenants: views.Tenants, Shards: svc.Store().Shards(), Act: svc, Logger: a.log, Clock: clock})
	if err != nil {
		return err
	}
	a.live.applied = append(a.live.applied, timers.Reconfigured, sweeper.Reconfigured)
	a.workers.Go(func() error { return sweeper.Run(ctx) })
	a.workers.Go(func() error { return ob.Run(ctx) })
	a.workers.Go(func() error { return worker.Run(ctx) })
	if mr := newModelReviewer(svc, views, judges, a.log); mr != nil {
		a.workers.Go(func() error { return mr.Run(ctx, js.Conn()) })
	}
	return nil
}

// declareStreams creates the derived streams idempotently, retrying while
// a cluster that has just started elects its leaders. They live in memory:
// after a NATS restart the outbox re-creates them (package outbox).
func declareStreams(ctx context.Context, b *broker.Broker) error {
	for _, sc := range append(events.StreamConfigs(b.Replicas), audit.StreamConfigs(b.Replicas)...) {
		var err error
		for attempt := 0; attempt < 10; attempt++ {
			if err = declareStream(ctx, b.JS, sc); err == nil || ctx.Err() != nil {
				break
			}
			if nc := kvstate.NotClustered(err, sc.Replicas); nc != nil {
				return fmt.Errorf("app: stream %s: %w", sc.Name, nc)
			}
			select { // a signal while starting stops the wait
			case <-ctx.Done():
			case <-time.After(time.Duration(attempt+1) * 500 * time.Millisecond):
			}
		}
		if err != nil {
			return fmt.Errorf("app: stream %s: %w", sc.Name, err)
		}
	}
	return nil
}

// declareStream creates sc, or updates the stream when it differs from
// sc. A stream already as declared is left alone: every process starts
// through here, and an update races the consumers other processes are
// creating on it (a data race inside nats-server 2.15's filestore).
func declareStream(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) error {
	if s, err := js.Stream(ctx, sc.Name); err == nil && events.SameStream(s.CachedInfo().Config, sc) {
		return nil
	}
	_, err := js.CreateOrUpdateStream(ctx, sc)
	return err
}

func (a *App) serve(ctx context.Context, o Options, svc *approvals.Service, reg *prometheus.Registry) error {
	ln := o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", o.Config.Listen); err != nil {
			return fmt.Errorf("app: listen %s: %w", o.Config.Listen, err)
		}
	}
	a.ln = ln
	cfg := o.Config
	maxConns := cfg.MaxConnections
	if maxConns == 0 && cfg.MaxLongPolls > 0 {
		maxConns = cfg.MaxLongPolls + httpapi.ConnHeadroom
	}
	t := cfg.HTTPTimeouts
	out, err := readOutside(cfg, nil)
	if err != nil {
		return err
	}
	signIn, err := a.signIn(ctx, cfg)
	if err != nil {
		return err
	}
	api, err := httpapi.New(httpapi.Config{Service: svc, Registry: reg, Logger: a.log, Ready: a.ready, MaxConnections: maxConns,
		Timeouts: httpapi.Timeouts{ReadHeader: t.ReadHeader, Read: t.Read, Write: t.Write, Idle: t.Idle},
		Links:    out.linkKey, Slack: out.slack, Watchers: a.watch, Config: a.live.Status, SignIn: signIn, Audit: a.audit})
	if err != nil {
		return err
	}
	a.api = api
	a.endSessions(signIn, api, svc)
	a.http, ln = api.NewServer(ln)
	go func() { a.served <- a.http.Serve(ln) }()
	return nil
}

// serveBus answers the bus API (SPEC §9) on a connection of its own until
// the workers stop.
func (a *App) serveBus(ctx, wctx context.Context, b *broker.Broker, svc *approvals.Service) error {
	nc, err := b.ConnectResponder("busapi")
	if err != nil {
		return err
	}
	bus, err := busapi.New(busapi.Config{Conn: nc, Service: svc, Registry: a.Registry, Logger: a.log})
	if err == nil {
		err = bus.Listen(ctx)
	}
	if err != nil {
		return err
	}
	a.workers.Go(func() error { return bus.Run(wctx) })
	return nil
}

// writeProbeEvery is how often /readyz asks whether the buckets a write
// needs have leaders; a /readyz call in between gets the last answer.
const writeProbeEvery = 250 * time.Millisecond

// ready answers /readyz: the start has finished (the HTTP listener serves
// before the bus does), NATS and JetStream answer, the buckets a write
// needs each have a leader, every mirror's watcher is live and caught up,
// and (with the deciders role) the outbox and the work consumer run. Only
// the first two cost round trips, the second at most once per
// writeProbeEvery.
func (a *App) ready(ctx context.Context) error {
	if !a.started.Load() {
		return errStarting
	}
	if err := a.Broker.Ready(ctx); err != nil {
		return err
	}
	if err := a.writable.Check(ctx); err != nil {
		return err
	}
	for _, check := range a.checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// errStarting: /readyz answers before the start has finished (the HTTP
// listener serves before the bus does); it is not ready yet.
var errStarting = errors.New("starting")

// Addr is the HTTP listener's address ("" without the api role).
func (a *App) Addr() string {
	if a.ln == nil {
		return ""
	}
	return a.ln.Addr().String()
}

// catchUpBudget bounds how long a stop waits for the request mirror to
// catch up with the last writes before its snapshot is saved.
const catchUpBudget = time.Second

// shutdownTimeout bounds Run's shutdown.
const shutdownTimeout = 30 * time.Second

// Run blocks until ctx ends, a worker fails or the HTTP server stops
// serving, then shuts the process down (Shutdown, bounded by 30 s). It
// returns nil when ctx ended and the shutdown was clean; otherwise the
// failure that stopped it (a worker's error as that worker returned it),
// joined with the shutdown's error, if any.
func (a *App) Run(ctx context.Context) error {
	cause := a.wait(ctx)
	a.log.Info("shutting down", "cause", cause)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return errors.Join(cause, a.Shutdown(sctx))
}

// wait returns nil when ctx ends, or the failure that ends the process
// first: a worker's error (the workers' context's cause) or the HTTP
// server's (left in served for Shutdown).
func (a *App) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-a.wctx.Done():
		return fmt.Errorf("app: a worker failed: %w", context.Cause(a.wctx))
	case err := <-a.served:
		a.served <- err
		return fmt.Errorf("app: the HTTP server stopped: %w", err)
	}
}

// Shutdown stops accepting, answers held long-polls at once, lets
// in-flight requests finish (until ctx ends), stops the workers and
// drains NATS. Safe to repeat: a later call returns the first one's
// error.
func (a *App) Shutdown(ctx context.Context) error {
	a.shutdown.Do(func() { a.shutdownErr = a.shutdownOnce(ctx) })
	return a.shutdownErr
}

func (a *App) shutdownOnce(ctx context.Context) error {
	var err error
	if a.http != nil {
		a.Service.Hub().Close()
		a.api.Close()
		err = a.http.Shutdown(ctx)
		if !errors.Is(<-a.served, http.ErrServerClosed) {
			err = errors.Join(err, errors.New("app: http server stopped early"))
		}
	}
	// The request mirror's snapshot, so that the next start need not
	// replay every request (a cache: a failure costs only that). Before
	// the workers (the watcher among them) stop, it catches up with the
	// last writes, for at most catchUpBudget.
	cctx, ccancel := context.WithTimeout(ctx, catchUpBudget)
	if cerr := a.views.Snapshots().CatchUp(cctx); cerr != nil {
		a.log.Info("snapshot: the mirror did not catch up before the stop; the next start replays the rest", "err", cerr)
	}
	ccancel()
	a.stopWorkers()
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	if serr := a.views.Snapshots().Save(sctx); serr != nil {
		a.log.Warn("snapshot: not saved", "err", serr)
	}
	cancel()
	a.Broker.Close()
	return err
}

func (a *App) stopWorkers() {
	a.cancel()
	if err := a.workers.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		a.log.Warn("worker stopped with error", "err", err)
	}
}

func has(roles []string, r string) bool { return slices.Contains(roles, r) }
