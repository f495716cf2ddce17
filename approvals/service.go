package approvals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/countersign/countersign/deciders"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
	"github.com/prometheus/client_golang/prometheus"
)

// Caller is an authenticated principal in a tenant with its token's scopes.
type Caller struct {
	Tenant    *domain.Tenant
	Principal domain.Ref
	Token     domain.Token
	// Session names the sign-in session that authenticated a person
	// (SPEC §13; set by the surface that looked it up), "" for a token.
	// A session's Token has no SHA256.
	Session string
}

// Admin reports whether the caller holds the admin scope.
func (c Caller) Admin() bool {
	for _, s := range c.Token.Scopes {
		if s == domain.ScopeAdmin {
			return true
		}
	}
	return false
}

// Config wires a Service.
type Config struct {
	Store   *kvstate.Store
	Views   *views.Views
	Checker *deciders.Checker
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Registry receives the use cases' metrics (submits by outcome and
	// those refused by a quota, on every surface). Default: a registry of
	// their own.
	Registry prometheus.Registerer
	// MaxLongPolls bounds the long-polls held at once; more are refused
	// with ErrRateLimited. Default DefaultMaxLongPolls.
	MaxLongPolls int
	// Watchers tells which sessions live clients watch (protected
	// writes, SPEC §8). Default none: no session is watched, and every
	// answer to a protected write is refused.
	Watchers Watchers
}

// DefaultMaxLongPolls is the default of Config.MaxLongPolls.
const DefaultMaxLongPolls = 100_000

// Service runs the use cases. It is safe for concurrent use.
type Service struct {
	store   *kvstate.Store
	views   *views.Views
	checker *deciders.Checker
	now     func() time.Time
	log     *slog.Logger
	hub     *Hub
	submits *prometheus.CounterVec
	shadows *prometheus.CounterVec // rules in shadow mode, agreeing or not (shadow.go)
	quota   *quotas
	watch   Watchers
	holds   holds
	names   names
}

// Validate reports a config New cannot run with: ErrConfig.
func (c Config) Validate() error {
	if c.Store == nil || c.Views == nil || c.Checker == nil {
		return fmt.Errorf("%w: the use cases need the store, the views and the checker", ErrConfig)
	}
	return nil
}

// New validates cfg and builds a Service, its metrics registered; the hub
// is fed by the views' request mirror. Errors: ErrConfig, or the
// registry's (a metric registered twice).
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxLongPolls <= 0 {
		cfg.MaxLongPolls = DefaultMaxLongPolls
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Service{store: cfg.Store, views: cfg.Views, checker: cfg.Checker, now: cfg.Now, log: cfg.Logger, hub: NewHub(cfg.MaxLongPolls)}
	s.watch = cfg.Watchers
	s.submits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_requests_submitted_total",
		Help: "Submitted requests by the status of their 201 and who decided."}, []string{"status", "by"})
	s.shadows = newShadowCounter()
	s.quota = newQuotas()
	for _, c := range []prometheus.Collector{s.submits, s.shadows, s.quota.refused} {
		if err := cfg.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("approvals: metrics: %w", err)
		}
	}
	cfg.Views.Requests().OnChange(s.hub.Observe)
	return s, nil
}

// Hub returns the long-poll hub (for shutdown and metrics).
func (s *Service) Hub() *Hub { return s.hub }

// Views returns the read side.
func (s *Service) Views() *views.Views { return s.views }

// Now is the time the use cases go by (Config.Now): deadlines, and the
// surfaces' own windows (a Slack click's timestamp).
func (s *Service) Now() time.Time { return s.now() }

// stateErr maps kvstate errors to this package's sentinels.
func stateErr(err error, notFound error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kvstate.ErrNotFound):
		return notFound
	case errors.Is(err, kvstate.ErrConflict), errors.Is(err, kvstate.ErrIllegal):
		return ErrConflict.Wrap(err)
	case errors.Is(err, kvstate.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return ErrUnavailable.Wrap(err)
	}
	return err
}

// record fetches a request the caller may see; ErrNotFound otherwise. On
// a replicated bucket any replica may answer, but never with less than
// this process has seen, and never a not-found that the leader does not
// confirm; a change refused on a replica's record is checked against the
// leader's (kvstate.TransitionFrom).
func (s *Service) record(ctx context.Context, c Caller, id domain.RequestID) (kvstate.Record, error) {
	if !domain.ValidGeneratedID(string(id)) {
		return kvstate.Record{}, ErrNotFound
	}
	rec, err := s.store.PeekRequest(ctx, c.Tenant.ID, id, s.seenRevision(c.Tenant.ID, id))
	if err != nil {
		return rec, stateErr(err, ErrNotFound)
	}
	if !s.visible(c, &rec.Request) {
		return kvstate.Record{}, ErrNotFound
	}
	return rec, nil
}

// mirrored reads a request for a change from this process's mirror, with
// no I/O, falling back to record when the mirror does not hold it or does
// not show it to c. The copy may lag the store: the change's
// compare-and-set refuses a write based on a stale copy, and a refusal
// based on one is checked against the stored record (kvstate.Record.MayLag).
func (s *Service) mirrored(ctx context.Context, c Caller, id domain.RequestID) (kvstate.Record, error) {
	if !domain.ValidGeneratedID(string(id)) {
		return kvstate.Record{}, ErrNotFound
	}
	if r, ok := s.views.Requests().GetPtr(kvstate.RequestKey(c.Tenant.ID, id)); ok && s.visible(c, &r.Request) {
		return s.Full(ctx, r.MayLag())
	}
	return s.record(ctx, c, id)
}

// Full returns rec with its arguments, read from the store when the
// mirror holds rec without them (kvstate.Record.Partial): every reader
// that shows or checks a mirrored record's arguments goes through it.
// Errors: ErrNotFound, ErrUnavailable.
func (s *Service) Full(ctx context.Context, rec kvstate.Record) (kvstate.Record, error) {
	rec, err := s.store.Full(ctx, rec)
	return rec, stateErr(err, ErrNotFound)
}

// seenRevision is the KV revision of a request this process has already
// seen (in its mirror; 0: none): a store read below it is stale (see
// kvstate/read.go), so a request just shown is never 404 or a false 409.
func (s *Service) seenRevision(tenant domain.TenantID, id domain.RequestID) uint64 {
	_, rev, _ := s.views.Requests().Held(kvstate.RequestKey(tenant, id))
	return rev
}

// visible: the requester, the agents in its chain, its member (and the
// member at the top of its chain), the person it waits on, and admin.
func (s *Service) visible(c Caller, r *domain.Request) bool {
	if c.Admin() {
		return true
	}
	switch c.Principal.Kind {
	case domain.KindAgent:
		for _, a := range r.Chain {
			if string(a) == c.Principal.ID {
				return true
			}
		}
	case domain.KindPerson:
		if r.Approver != nil && *r.Approver == c.Principal { // kept across a config reload
			return true
		}
		a, ok := s.views.Agent(r.Tenant, r.Agent)
		return ok && string(a.Member) == c.Principal.ID || inGroup(c, r) || coveredBy(r, c.Principal) || s.topMember(r) == c.Principal.ID
	}
	return false
}

// inGroup: a person of the group r waits on, or whose allow r counts
// (SPEC §12), sees r.
func inGroup(c Caller, r *domain.Request) bool {
	return c.Tenant.WaitsOn(r.Approver, domain.MemberID(c.Principal.ID)) || r.Approvals.By(c.Principal)
}

// topMember is the member of r's chain's top agent: the person at the top
// of delegated work for another member's agent (SPEC §3).
func (s *Service) topMember(r *domain.Request) string {
	if len(r.Chain) == 0 {
		return ""
	}
	a, ok := s.views.Agent(r.Tenant, r.Chain[0])
	if !ok {
		return ""
	}
	return string(a.Member)
}

// memberOf returns the member a caller works for ("" for services).
func (s *Service) memberOf(c Caller) domain.MemberID {
	switch c.Principal.Kind {
	case domain.KindPerson:
		return domain.MemberID(c.Principal.ID)
	case domain.KindAgent:
		if a, ok := s.views.Agent(c.Tenant.ID, domain.AgentID(c.Principal.ID)); ok {
			return a.Member
		}
	}
	return ""
}

// Store returns the state the service writes.
func (s *Service) Store() *kvstate.Store { return s.store }
