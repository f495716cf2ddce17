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
	retry "github.com/countersign/countersign/backoff"
	"github.com/countersign/countersign/busapi"
	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
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
)

// Options for New.
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

// App is one process: New builds it, Run runs it.
type App struct {
	Service  *approvals.Service
	Broker   *broker.Broker
	Registry *prometheus.Registry
	log      *slog.Logger
	http     *http.Server
	api      *httpapi.API
	bus      *busapi.Server
	ln       net.Listener
	checks   []func() error  // readiness beyond NATS answering; no I/O
	group    *deciders.Group // the live deciders processes (deciders role)
	workers  []worker        // started by Run, on its context
	writable *kvstate.WriteProbe
	views    *views.Views
	judge    *rulesJudge // the tenants' judges, rebuilt by each config revision
	watch    *rpc.Watchers
	live     *live
	audit    *httpapi.AuditConfig // the API's audit log (SPEC §14)

	started  atomic.Bool   // the start has finished: ready may say so
	up       chan struct{} // closed when Run has started everything
	served   chan error    // the HTTP server's end
	serving  bool          // Run started the HTTP server (set before up)
	running  atomic.Bool   // Run (or Shutdown) was called
	quit     chan struct{} // closed by Shutdown: Run stops as if ctx ended
	quitOnce sync.Once
	done     chan struct{} // closed when Run returned
	runErr   error         // what Run returned (read after done)
}

// worker is one of the process's loops: it runs until ctx ends, and
// returns nil then, or an error for a failure that stops the process.
type worker func(ctx context.Context) error

// New builds everything the configured roles need, and starts no worker:
// it runs Check first (a config Check refuses is refused with its error,
// naming the key at fault, before anything is opened), takes the HTTP
// port (one that is taken fails at once), starts or connects to NATS,
// declares the streams and buckets, and builds every service and worker
// from Config. Run runs them. An App that New returned holds NATS and
// the port until Run returns (Run on an ended ctx only shuts it down).
func New(ctx context.Context, o Options) (*App, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	cfg := o.Config
	if cfg == nil {
		return nil, errors.New("app: no config")
	}
	c, err := check(cfg) // the one validation (Check), before anything starts
	if err != nil {
		return nil, err
	}
	var own net.Listener // closed if the build fails
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
	a, err := build(ctx, o, b, c.tenants)
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

// build makes the App on b: the state, the views, the use cases and the
// roles' services, each given all it needs at construction.
func build(ctx context.Context, o Options, b *broker.Broker, tenants []*domain.Tenant) (*App, error) {
	a := &App{Broker: b, log: o.Logger, Registry: prometheus.NewRegistry(), up: make(chan struct{}),
		served: make(chan error, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if err := a.buildCore(ctx, o, b, tenants); err != nil {
		return nil, err
	}
	var applied []func()
	if has(o.Config.Roles, "deciders") {
		var err error
		if applied, err = a.buildDeciders(ctx, o); err != nil {
			return nil, err
		}
	}
	a.workers = append(a.workers, a.views.Run,
		func(ctx context.Context) error { a.views.Snapshots().Keep(ctx, views.SnapshotEvery); return nil })
	var signIn *httpapi.SignInConfig
	if has(o.Config.Roles, "api") {
		var err error
		if a.audit, err = auditAPI(ctx, b.JS, o.Config, a); err != nil {
			return nil, err
		}
		if signIn, err = a.signIn(ctx, o.Config); err != nil {
			return nil, err
		}
	}
	a.live = newLive(liveConfig{file: o.ConfigFile, process: o.Config, store: a.Service.Store(), svc: a.Service, broker: b, judges: a.judge,
		applied: applied, stored: a.sessionsEnded(signIn)}, a.Registry, o.Logger)
	if has(o.Config.Roles, "api") {
		if err := a.buildAPI(o, signIn); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// buildCore declares the streams and builds the state, the views, the
// judges and the use cases.
func (a *App) buildCore(ctx context.Context, o Options, b *broker.Broker, tenants []*domain.Tenant) error {
	if err := declareStreams(ctx, b); err != nil {
		return err
	}
	shards, syncsFree := max(o.Config.RequestShards, 1), b.SyncsFree()
	store, err := kvstate.Open(ctx, kvstate.Config{JS: b.JS, Replicas: b.Replicas, Shards: shards, SyncsFree: syncsFree})
	if err != nil {
		return err
	}
	// The group-committed buckets' and the audit log's batches are staged
	// in memory (before the first batch is sent): it saves the server five
	// syncs a batch. A batch of the log that a machine's crash cut short
	// is dropped before anything reads the log: the writer sends it again.
	if root, err := b.StageBatchesInMemory(append(store.ShardedStreams(), audit.Stream)...); err != nil {
		o.Logger.Warn("atomic batches: some are staged on disk", "err", err)
	} else if root != "" {
		o.Logger.Debug("atomic batches: staged in memory", "under", root)
	}
	if n, err := audit.DropPartialBatch(ctx, b.JS); err != nil {
		return err
	} else if n > 0 {
		o.Logger.Warn("audit: dropped the messages of a batch a crash cut short; the writer stores it again", "messages", n)
	}
	// The mirrors' watchers get a connection of their own.
	watchJS, err := b.Connect("watchers")
	if err != nil {
		return err
	}
	watchStore, err := kvstate.Open(ctx, kvstate.Config{JS: watchJS, Replicas: b.Replicas, Shards: shards, SyncsFree: syncsFree})
	if err != nil {
		return err
	}
	vw, err := views.New(views.Config{Store: watchStore, Tenants: tenants, Logger: o.Logger})
	if err != nil {
		return err
	}
	judges := newRulesJudge(tenants, a.Registry, o.Logger)
	checker, err := deciders.NewChecker(deciders.CheckerConfig{Views: vw, Judge: judges, Rules: approvals.Rules(vw)})
	if err != nil {
		return err
	}
	// The watched sessions (protected writes) are shared on a connection of their own.
	watchNC, err := b.Connect("rpc-watchers")
	if err != nil {
		return err
	}
	a.watch = rpc.NewWatchers(watchNC.Conn(), 0, o.Logger)
	svc, err := approvals.New(approvals.Config{Store: store, Views: vw, Checker: checker, Now: o.Clock.Now, Logger: o.Logger, MaxLongPolls: o.Config.MaxLongPolls,
		Registry: a.Registry, Watchers: a.watch})
	if err != nil {
		return err
	}
	dropRetired(b, vw, svc)
	a.Service, a.views, a.judge = svc, vw, judges
	a.writable = store.WriteProbe(writeProbeEvery)
	a.checks = []func() error{vw.Current}
	a.workers = []worker{a.writable.Run}
	return nil
}

// buildAPI builds the HTTP API and the bus API (SPEC §9), each on its
// own connection; Run serves them.
func (a *App) buildAPI(o Options, signIn *httpapi.SignInConfig) error {
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
	api, err := httpapi.New(httpapi.Config{Service: a.Service, Registry: a.Registry, Logger: a.log, Ready: a.ready, MaxConnections: maxConns,
		Timeouts: httpapi.Timeouts{ReadHeader: t.ReadHeader, Read: t.Read, Write: t.Write, Idle: t.Idle},
		Links:    out.linkKey, Slack: out.slack, Watchers: a.watch, Config: a.live.Status, SignIn: signIn, Audit: a.audit})
	if err != nil {
		return err
	}
	a.api = api
	a.http, a.ln = api.NewServer(o.Listener)
	if signIn != nil { // a session ended anywhere ends what it holds here
		a.workers = append(a.workers, func(ctx context.Context) error {
			return signIn.Store.WatchEnded(ctx, func(id string) { api.EndSession(id) })
		})
	}
	nc, err := a.Broker.ConnectResponder("busapi")
	if err != nil {
		return err
	}
	if a.bus, err = busapi.New(busapi.Config{Conn: nc, Service: a.Service, Registry: a.Registry, Logger: a.log}); err != nil {
		return err
	}
	return nil
}

// dropRetired closes the bus connections of agents retired (or removed)
// after they connected: their tokens are refused from then on, on the bus
// as over HTTP.
func dropRetired(b *broker.Broker, views *views.Views, svc *approvals.Service) {
	mirror := views.AgentMirror()
	gone := agentGone(views)
	mirror.OnChange(func(_ string, a domain.Agent, deleted bool) {
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
func agentGone(views *views.Views) func(domain.TenantID, domain.Ref) bool {
	return func(t domain.TenantID, p domain.Ref) bool {
		if p.Kind != domain.KindAgent {
			return false
		}
		_, ok := views.Agent(t, domain.AgentID(p.ID))
		return !ok || views.Retired(t, domain.AgentID(p.ID))
	}
}

// buildDeciders builds the deciders role's workers: the group, timers,
// offers, sweeper, outbox, work consumer, model reviewer, webhooks and
// email, and the audit writer. It returns what each applied config
// revision must call (live.applied).
func (a *App) buildDeciders(ctx context.Context, o Options) ([]func(), error) {
	js, err := a.Broker.Connect("deciders")
	if err != nil {
		return nil, err
	}
	svc, views, clock := a.Service, a.views, o.Clock
	group, err := deciders.NewGroup(ctx, deciders.GroupConfig{JS: js, Replicas: a.Broker.Replicas, Logger: a.log})
	if err != nil {
		return nil, err
	}
	a.group = group
	timers, err := deciders.NewTimers(deciders.TimersConfig{Views: views, Act: svc, Group: group, Logger: a.log, Clock: clock})
	if err != nil {
		return nil, err
	}
	views.Requests().OnChange(timers.Observe)
	offers, err := deciders.NewOffers(deciders.OffersConfig{Conn: js.Conn(), Views: views, Store: svc.Store(), Logger: a.log, Clock: clock})
	if err != nil {
		return nil, err
	}
	views.Requests().OnChange(offers.Observe)
	ob, err := outbox.New(outbox.Config{JS: js, Store: svc.Store(), Views: views, Grants: svc, Logger: a.log, Streams: events.StreamConfigs(a.Broker.Replicas), Listening: a.Broker.Interest()})
	if err != nil {
		return nil, err
	}
	worker, err := deciders.NewWorker(deciders.WorkerConfig{JS: js, Offers: offers, Logger: a.log})
	if err != nil {
		return nil, err
	}
	sweeper, err := deciders.NewSweeper(deciders.SweeperConfig{JS: js, Tenants: views.Tenants, Shards: svc.Store().Shards(), Act: svc, Logger: a.log, Clock: clock})
	if err != nil {
		return nil, err
	}
	a.checks = append(a.checks, ob.Healthy, worker.Healthy)
	a.workers = append(a.workers, timers.Run, group.Run, sweeper.Run, ob.Run, worker.Run)
	if mr := newModelReviewer(svc, views, a.judge, a.log); mr != nil {
		a.workers = append(a.workers, func(ctx context.Context) error { return mr.Run(ctx, js.Conn()) })
	}
	if err := a.buildNotify(ctx, o, js); err != nil {
		return nil, err
	}
	if err := a.buildAudit(a.views, o.NoAudit); err != nil {
		return nil, err
	}
	return []func(){timers.Reconfigured, sweeper.Reconfigured}, nil
}

// declareStreams creates the derived streams idempotently, retrying while
// a cluster that has just started elects its leaders (package backoff;
// ctx ending stops the wait). They live in memory: after a NATS restart
// the outbox re-creates them (package outbox).
func declareStreams(ctx context.Context, b *broker.Broker) error {
	derived := events.StreamConfigs(b.Replicas)
	for i, sc := range append(derived, audit.StreamConfigs(b.Replicas)...) {
		err := retry.Retry(ctx, kvstate.DeclareRetry, kvstate.DeclareAttempts, func(ctx context.Context) error {
			err := declareStream(ctx, b.JS, sc, i < len(derived))
			if err == nil {
				return nil
			}
			if nc := kvstate.NotClustered(err, sc.Replicas); nc != nil {
				return retry.Permanent(nc)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("app: stream %s: %w", sc.Name, err)
		}
	}
	return nil
}

// declareStream creates sc, or updates the stream when it differs from
// sc. A stream already as declared is left alone: every process starts
// through here, and an update races the consumers other processes are
// creating on it (a data race inside nats-server 2.15's filestore). A
// derived stream (events.StreamConfigs) whose subjects changed is made
// again instead: what it held is derived again at start, and it must not
// keep messages of subjects another stream now takes (the people's work,
// once on the work stream, which no consumer would take any more).
func declareStream(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig, derived bool) error {
	if s, err := js.Stream(ctx, sc.Name); err == nil {
		have := s.CachedInfo().Config
		if events.SameStream(have, sc) {
			return nil
		}
		if derived && !slices.Equal(have.Subjects, sc.Subjects) {
			if err := js.DeleteStream(ctx, sc.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
				return err
			}
		}
	}
	_, err := js.CreateOrUpdateStream(ctx, sc)
	return err
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

func has(roles []string, r string) bool { return slices.Contains(roles, r) }
