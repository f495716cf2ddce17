package busapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/countersign/countersign/approvals"
	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/prometheus/client_golang/prometheus"
)

// Service identity on the bus (nats micro ls).
const (
	ServiceName    = "countersign"
	ServiceVersion = "1.0.0"
)

// DefaultMaxInFlight is the default of Config.MaxInFlight.
const DefaultMaxInFlight = 256

// opTimeout bounds one operation: the longest long-poll and some slack.
const opTimeout = wire.MaxWait + 15*time.Second

// Config wires a Server.
type Config struct {
	// Conn is countersign's own connection the service answers on.
	Conn *nats.Conn
	// Service runs the use cases.
	Service *approvals.Service
	// MaxInFlight bounds the messages of one token being handled at once;
	// more are refused with 429 RateLimited. Default DefaultMaxInFlight.
	MaxInFlight int
	// Registry receives countersign_bus_requests_total. Default: a
	// registry of its own.
	Registry prometheus.Registerer
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
}

// Validate reports a missing connection or service.
func (c *Config) Validate() error {
	if c.Conn == nil || c.Service == nil {
		return errors.New("busapi: Conn and Service are required")
	}
	return nil
}

// Refusals of admit, with the detail a client sees.
var (
	errOtherTenant = approvals.ErrForbidden.With("this token belongs to another tenant")
	errFlood       = approvals.ErrRateLimited.With("too many messages of this token in flight; retry shortly")
	errStopping    = approvals.ErrUnavailable.With("this process is shutting down; retry")
	// errForeignReply: the reply subject is not the caller's own inbox.
	// Such a message is never answered: the answer would land in someone
	// else's inbox (or on any subject countersign may publish to).
	errForeignReply = errors.New("busapi: reply subject outside the caller's inbox")
	// errNoCaller: the token does not authenticate and the reply subject
	// is no inbox of the subject's tenant (the only connections that may
	// publish there are that tenant's and countersign's own): never
	// answered. Into such an inbox the 401 goes (SPEC §9: never silence).
	errNoCaller = errors.New("busapi: no caller to answer")
)

// Server answers the bus API.
type Server struct {
	nc     *nats.Conn
	svc    *approvals.Service
	log    *slog.Logger
	limit  *limiter
	ops    map[string]op
	ms     micro.Service
	served *prometheus.CounterVec
	mu     sync.Mutex // guards closed and flight.Add against flight.Wait
	closed bool
	flight sync.WaitGroup

	discover []*nats.Subscription // discovery.go's subscriptions
}

// New builds a Server from cfg.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{nc: cfg.Conn, svc: cfg.Service, log: cfg.Logger, limit: newLimiter(cfg.MaxInFlight)}
	s.served = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_bus_requests_total",
		Help: "Bus API messages, by operation and status code (a 401 whose reply subject is no inbox of the tenant, and a 403 for a reply subject outside the caller's inbox, are not answered)."}, []string{"op", "code"})
	_ = cfg.Registry.Register(s.served)
	s.ops = s.table()
	return s, nil
}

// Listen adds the micro service and its endpoints, answering from then
// on; call it before Run to know the service is up (Run calls it if not).
// Operations get ctx's values, never its cancellation: one that started
// replies, bounded by opTimeout.
func (s *Server) Listen(ctx context.Context) error {
	ms, err := micro.AddService(s.nc, micro.Config{Name: ServiceName, Version: ServiceVersion,
		Description: "countersign approvals: request/reply on countersign.<tenant>.api.<op>"})
	if err != nil {
		return fmt.Errorf("busapi: add service: %w", err)
	}
	for _, name := range events.APIOps {
		if err := ms.AddEndpoint(name, s.handler(ctx, name), micro.WithEndpointSubject(events.APIFilter(name))); err != nil {
			_ = ms.Stop()
			return fmt.Errorf("busapi: endpoint %s: %w", name, err)
		}
	}
	s.ms = ms
	if err := s.listenDiscovery(); err != nil {
		_ = ms.Stop()
		return fmt.Errorf("busapi: discovery: %w", err)
	}
	return s.nc.Flush()
}

// Run answers until ctx ends; then it stops taking messages, lets the
// operations in flight reply, and returns nil. It returns an error only
// if the service cannot be added.
func (s *Server) Run(ctx context.Context) error {
	if s.ms == nil {
		if err := s.Listen(ctx); err != nil {
			return err
		}
	}
	<-ctx.Done()
	err := errors.Join(s.stopDiscovery(), s.ms.Stop()) // drains: a message already taken may still arrive
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.flight.Wait()
	if err != nil {
		s.log.Warn("bus api stop", "err", err)
	}
	return nil
}

// handler authenticates and bounds a message on the subscription's
// goroutine (cheap: no I/O) and runs the operation on its own, so one
// slow operation, such as a long-poll, holds up no other message.
func (s *Server) handler(ctx context.Context, name string) micro.HandlerFunc {
	o := s.ops[name]
	return func(req micro.Request) {
		if req.Reply() == "" {
			return // nowhere to answer: do nothing at all
		}
		c, err := s.admit(req, o)
		if errors.Is(err, errForeignReply) || errors.Is(err, errNoCaller) {
			s.drop(req.Subject(), req.Reply(), name, c, err)
			return
		}
		if err == nil && !s.enter() {
			s.limit.release(c.Token.SHA256)
			err = errStopping
		}
		if err != nil {
			s.refuse(req, name, err)
			return
		}
		go func() {
			defer s.flight.Done()
			defer s.limit.release(c.Token.SHA256)
			s.run(ctx, req, name, o, c)
		}()
	}
}

// enter counts an operation in flight unless Run is done waiting for them.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.flight.Add(1)
	return true
}

// admit runs the checks that need no I/O, in this order: the token (401
// Unauthenticated into an inbox of the subject's tenant, else
// errNoCaller: nothing is published), the reply subject (the caller's own
// inbox, else errForeignReply: nothing is published), 403 (scope and
// principal kind, then the tenant of the subject), 413, then the token's
// in-flight bound (429). The scope and principal kind are the table's
// (approvals.Service.Admit here, so that a refused message takes no slot;
// the operation's endpoint asks the same again). On success the caller
// holds a slot that must be released.
func (s *Server) admit(req micro.Request, o op) (approvals.Caller, error) {
	auth := header(req.Headers(), "Authorization")
	c, err := s.svc.Admit(auth, o.op, nil)
	if errors.Is(err, approvals.ErrUnauthenticated) {
		return c, unauthenticated(req, err)
	}
	if !inbox(req.Reply(), events.InboxPrefix(c.Tenant.ID, c.Principal)) {
		return c, errForeignReply
	}
	if err != nil {
		return c, err
	}
	if t, ok := events.TenantOfAPISubject(req.Subject()); !ok || t != c.Tenant.ID {
		return c, errOtherTenant
	}
	if len(req.Data()) > wire.MaxBody {
		return c, approvals.ErrTooLarge
	}
	if !s.limit.acquire(c.Token.SHA256) {
		return c, errFlood
	}
	return c, nil
}

// unauthenticated is the refusal of a message whose token does not
// authenticate (err, a 401): answered when its reply subject is an inbox
// of the subject's tenant, since only that tenant's connections (and
// countersign's own) may publish there; errNoCaller otherwise.
func unauthenticated(req micro.Request, err error) error {
	if t, ok := events.TenantOfAPISubject(req.Subject()); ok && events.InboxOfTenant(t, req.Reply()) {
		return err
	}
	return errNoCaller
}

func (s *Server) run(ctx context.Context, req micro.Request, name string, o op, c approvals.Caller) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil { // as net/http does: one message, not the process
			s.fail(req, name, fmt.Errorf("busapi: panic: %v", p))
		}
	}()
	res, err := o.run(ctx, c, input(req))
	if err != nil {
		s.fail(req, name, err)
		return
	}
	s.served.WithLabelValues(name, strconv.Itoa(res.Status)).Inc()
	s.publish(req.Reply(), success(res.Status, res.Value()))
}
