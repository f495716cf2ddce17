package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/httpapi/inbox"
	"github.com/countersign/countersign/httpapi/rpc"
	"github.com/countersign/countersign/problem"
	"github.com/prometheus/client_golang/prometheus"
)

// MaxBody is the largest request body accepted (SPEC §5).
const MaxBody = wire.MaxBody

// Config wires the API.
type Config struct {
	Service *approvals.Service
	// Ready reports whether NATS and KV answer (GET /readyz).
	Ready func(ctx context.Context) error
	// Registry receives the API's metrics; /metrics serves Gatherer.
	Registry *prometheus.Registry
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Timeouts bound each connection; see Timeouts for the defaults.
	Timeouts Timeouts
	// MaxConnections bounds the connections NewServer's listener holds
	// open. Default DefaultMaxLongPolls + ConnHeadroom; always lowered to
	// what the open-file limit leaves room for.
	MaxConnections int
	// Links, when set, serves decision links at /d/{token}.
	Links *LinkConfig
	// Slack lists the tenants whose Slack buttons post clicks to
	// POST /v1/slack/interactions.
	Slack []SlackTenant
	// Watchers counts the sessions /v1/rpc's clients watch (the same as
	// the Service's Watchers). Default: the handler's own.
	Watchers *rpc.Watchers
	// Config is the running config revision (GET /v1/config). Default:
	// none (revision 0).
	Config func() ConfigStatus
	// SignIn, when set, lets people sign in with an OpenID provider
	// (SPEC §13); without it only tokens authenticate.
	SignIn *SignInConfig
	// Audit, when set, serves the audit log at /v1/audit (SPEC §14).
	Audit *AuditConfig
}

// API is the HTTP handler.
type API struct {
	svc      *approvals.Service
	ready    func(ctx context.Context) error
	log      *slog.Logger
	mux      *http.ServeMux
	metrics  *metrics
	closing  chan struct{}
	timeouts Timeouts
	maxConns int
	watchers *rpc.Watchers
	// configStatus is Config.Config.
	configStatus func() ConfigStatus
	signIn       *SignInConfig
	// signInRefusals counts refusals that matched no member (with SignIn).
	signInRefusals *prometheus.CounterVec
	notifyHandlers
}

// ErrConfig: New was given a config it cannot run with.
var ErrConfig = errors.New("httpapi: bad config")

// Validate reports a config New cannot run with: ErrConfig.
func (c *Config) Validate() error {
	if c.Service == nil || c.Ready == nil {
		return fmt.Errorf("%w: the API needs the Service and Ready", ErrConfig)
	}
	return nil
}

// New validates cfg and builds the API handler, its metrics registered.
// Errors: ErrConfig, the /v1/rpc handler's, or the registry's (a metric
// registered twice).
func New(cfg Config) (*API, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	cfg.Timeouts.setDefaults()
	a := &API{svc: cfg.Service, ready: cfg.Ready, log: cfg.Logger, mux: http.NewServeMux(), closing: make(chan struct{}),
		timeouts: cfg.Timeouts, maxConns: connBound(cfg.MaxConnections, openFileLimit()), watchers: cfg.Watchers,
		configStatus: cfg.Config, signIn: cfg.SignIn}
	if cfg.MaxConnections > a.maxConns {
		a.log.Warn("max_connections lowered to fit the open-file limit", "max_connections", a.maxConns)
	}
	var err error
	if a.metrics, err = newMetrics(cfg.Registry, cfg.Service); err != nil {
		return nil, err
	}
	if cfg.SignIn != nil {
		if a.signInRefusals, err = newSignInRefusals(cfg.Registry); err != nil {
			return nil, err
		}
	}
	if err := a.routes(cfg.Registry); err != nil {
		return nil, err
	}
	if err := a.notifyRoutes(cfg); err != nil {
		return nil, err
	}
	a.auditRoutes(cfg.Audit)
	return a, nil
}

// Close ends open event streams (at shutdown, so that http.Server.Shutdown
// does not wait for them). Safe to call once.
func (a *API) Close() { close(a.closing) }

// handler is an endpoint that returns its error for the wrapper to write.
type handler func(w http.ResponseWriter, r *http.Request) error

func (a *API) routes(reg *prometheus.Registry) error {
	rpcHandler, err := rpc.New(rpc.Config{Service: a.svc, Logger: a.log, Closing: a.closing, Watchers: a.watchers, Sessions: a.rpcSessions})
	if err != nil {
		return err
	}
	a.handle("POST /v1/requests", a.endpoint(approvals.OpSubmit, nil))
	a.handle("GET /v1/requests", a.endpoint(approvals.OpList, read()))
	a.handle("GET /v1/requests/{id}", a.endpoint(approvals.OpGet, a.longPoll()))
	a.handle("POST /v1/requests/{id}", a.endpoint(approvals.OpAnswer, path("id")))
	a.handle("POST /v1/requests/{id}/cancel", a.endpoint(approvals.OpCancel, path("id")))
	a.handle("POST /v1/requests/{id}/claim", a.endpoint(approvals.OpClaim, path("id")))
	a.handle("POST /v1/turns/{turn}/cancel", a.endpoint(approvals.OpCancel, path("turn")))
	a.handle("GET /v1/grants", a.endpoint(approvals.OpGrants, read()))
	a.handle("DELETE /v1/grants/{id}", a.endpoint(approvals.OpRevoke, path("id")))
	a.handle("POST /v1/agents", a.endpoint(approvals.OpRegisterAgent, nil))
	a.handle("DELETE /v1/agents/{id}", a.endpoint(approvals.OpRetireAgent, path("id")))
	a.handle("GET /v1/agents/{id}/rules", a.endpoint(approvals.OpRules, read("id")))
	a.handle("POST /v1/agents/{id}/rules", a.endpoint(approvals.OpAddRule, path("id")))
	a.handle("DELETE /v1/agents/{id}/rules/{rule_id}", a.endpoint(approvals.OpDeleteRule, path("id", "rule_id")))
	a.handle("DELETE /v1/agents/{id}/delegations/{session}", a.endpoint(approvals.OpEndDelegation, path("id", "session")))
	a.handle("GET /v1/events", a.events)
	a.handle("GET /v1/config", a.runningConfig)
	a.handle("GET /v1/people", a.people)
	a.signInRoutes()
	a.mux.Handle("GET /v1/rpc", rpcHandler)
	a.handle("GET /healthz", a.healthz)
	a.handle("GET /readyz", a.readyz)
	a.handle("GET /v1/openapi.json", a.openapi)
	a.mux.Handle("GET /metrics", metricsHandler(reg))
	inbox.Mount(a.mux) // the web inbox: GET / and GET /inbox/…
	return nil
}

func (a *API) handle(pattern string, h handler) {
	a.mux.Handle(pattern, a.metrics.instrument(pattern, a.wrap(h)))
}

// wrap writes a handler's error as problem+json. A request whose client
// has gone is not answered: it is counted as abandoned and logged at debug.
func (a *API) wrap(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		switch {
		case err == nil:
		case r.Context().Err() != nil:
			abandoned(w)
			a.log.Debug("client left before the answer", "path", r.URL.Path, "request_id", w.Header().Get("X-Request-ID"))
		default:
			a.writeError(w, r, err)
		}
	})
}

// writeError logs what the client cannot retry its way out of, then
// writes the problem.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p := problem.From(err)
	if !bodyRead(r) { // never wait for a body nobody reads
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	switch p.Status {
	case http.StatusInternalServerError:
		a.log.Error("request failed", "path", r.URL.Path, "request_id", w.Header().Get("X-Request-ID"), "err", err)
	case http.StatusServiceUnavailable:
		a.log.Warn("request failed", "path", r.URL.Path, "request_id", w.Header().Get("X-Request-ID"), "err", err)
	}
	writeProblem(w, p)
}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// ServeHTTP sets X-Request-ID, limits bodies, serves only the health checks
// on spare connections, and answers unknown routes and methods with problems.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-ID")
	if !validRequestID.MatchString(id) {
		id = newRequestID()
	}
	w.Header().Set("X-Request-ID", id)
	if onSpare(r) && serveSpare(w, r) {
		return
	}
	r.Body = trackBody(w, r)
	if _, pattern := a.mux.Handler(r); pattern == "" {
		a.noRoute(w, r)
		return
	}
	a.mux.ServeHTTP(w, r)
}

// noRoute tells a wrong method (405, with Allow) from no endpoint (404).
func (a *API) noRoute(w http.ResponseWriter, r *http.Request) {
	probe := &allowRecorder{header: http.Header{}}
	a.mux.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		writeProblem(w, errMethod.Problem())
		return
	}
	writeProblem(w, errNoRoute.Problem())
}

type allowRecorder struct {
	header http.Header
	status int
}

func (r *allowRecorder) Header() http.Header         { return r.header }
func (r *allowRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *allowRecorder) WriteHeader(s int)           { r.status = s }

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (a *API) healthz(w http.ResponseWriter, _ *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (a *API) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if a.ready != nil {
		if err := a.ready(ctx); err != nil {
			return problem.New(http.StatusServiceUnavailable, "Unavailable", "not ready: "+err.Error())
		}
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
