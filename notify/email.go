package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/countersign/countersign/clock"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/kvstate"
)

// MailBucket keeps, per tenant, the email feed's progress and lease and,
// per request, what each person was sent (the thread and the reminder).
const MailBucket = "email"

// MailBucketConfig declares the email bucket.
func MailBucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: MailBucket, Description: "email progress, leases and what each person was sent, per request",
		History: 1, Storage: jetstream.FileStorage, Replicas: replicas, LimitMarkerTTL: kvstate.LimitMarkerTTL}
}

// Mail is one tenant's mail server (SPEC §10 "Email").
type Mail struct {
	Tenant domain.TenantID
	// Addr is the SMTP server, host:port.
	Addr string
	// From is the sender address (RFC 5322, a name allowed).
	From string
	// Username and Password, when set, authenticate with AUTH PLAIN, only
	// ever over TLS (or, with StartTLS false, to a loopback relay).
	Username, Password string
	// StartTLS upgrades the connection whenever the server offers it;
	// without TLS no credentials are sent. False never upgrades (a
	// loopback relay).
	StartTLS bool
}

// Validate checks m. Errors: ErrConfig.
func (m *Mail) Validate() error {
	host, _, err := net.SplitHostPort(m.Addr)
	switch {
	case err != nil || host == "":
		return fmt.Errorf("%w: email smtp %q is not host:port", ErrConfig, m.Addr)
	case (m.Username == "") != (m.Password == ""):
		return fmt.Errorf("%w: email: a username needs a password, and the reverse", ErrConfig)
	case m.Username != "" && !m.StartTLS && !loopbackHost(host):
		return fmt.Errorf("%w: email: starttls false would send the credentials in the clear to %s", ErrConfig, host)
	}
	if a, err := mail.ParseAddress(m.From); err != nil || domainOf(a.Address) == "" {
		return fmt.Errorf("%w: email from %q is not an address", ErrConfig, m.From)
	}
	return nil
}

// loopbackHost is net/smtp's PlainAuth rule for a server that may get
// credentials without TLS.
func loopbackHost(h string) bool { return h == "localhost" || h == "127.0.0.1" || h == "::1" }

// MailConfig wires a Mailer.
type MailConfig struct {
	// JS reads the requests' stream and keeps the email bucket. Required.
	JS jetstream.JetStream
	// Tenants with a mail server.
	Tenants []Mail
	// Links, when set, puts the decision links in each message.
	Links *Links
	// Tenant is the tenant as it stands now: its members' email, names,
	// backups, and who a group's request waits on. Required.
	Tenant func(domain.TenantID) (*domain.Tenant, bool)
	// Name, when set, is a person's name when the config gives none (the
	// ID token's, approvals.Service.PersonName).
	Name func(domain.TenantID, domain.MemberID) string
	// Request reads a request as stored now (nil, nil when it is gone),
	// to check that a reminder is still due. Required.
	Request func(ctx context.Context, tenant domain.TenantID, id domain.RequestID) (*domain.Request, error)
	// Replicas of the email bucket. Default 1.
	Replicas int
	// Shards is request_shards. Default 1.
	Shards int
	// Tuning bounds attempts and retries (Timeout, BackoffBase, BackoffMax,
	// MaxAge, LeaseTTL, TLS for the mail server's certificate).
	Tuning Tuning
	// Registry receives the email metrics. Default: a registry of its own.
	Registry prometheus.Registerer
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Clock times leases and reminders. Default the system's.
	Clock clock.Clock
}

func (c *MailConfig) setDefaults() {
	c.Tuning.setDefaults()
	c.Replicas, c.Shards = max(c.Replicas, 1), max(c.Shards, 1)
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
}

// Validate checks the config. Errors: ErrConfig.
func (c *MailConfig) Validate() error {
	if c.JS == nil || c.Tenant == nil || c.Request == nil {
		return fmt.Errorf("%w: email needs JS, Tenant and Request", ErrConfig)
	}
	for i := range c.Tenants {
		if err := c.Tenants[i].Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Mailer sends people email about the requests that wait on them (SPEC
// §10 "Email"): one message when a request comes to wait on a person
// (created, moved to them, a later stage), one reminder at half of their
// answer_within (else of the time left) if it still waits on them, all
// of a request's messages in one thread.
//
// Contract:
//   - It reads the requests' stream in the deciders role, never the
//     decision path: a slow, refusing or absent mail server never delays
//     or changes a decision.
//   - A request's writes are handled in revision order, one at a time;
//     requests, and people of one request, never wait for each other. A
//     failed attempt is retried with backoff until MaxAge after the write
//     (a reminder: after it fell due), then dropped and counted.
//   - Progress, a lease per tenant and what each person was sent are kept
//     in the bucket MailBucket, so a restart or another process sends
//     each message once and every reminder owed; a message sent just
//     before a crash may go again, with the same Message-ID.
//   - Credentials go over TLS only (Mail.StartTLS).
type Mailer struct {
	cfg     MailConfig
	kv      jetstream.KeyValue
	metrics *mailMetrics
	holder  string
	feeds   []*mailFeed
}

// NewMailer validates cfg and builds a Mailer. Errors: ErrConfig.
func NewMailer(cfg MailConfig) (*Mailer, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Mailer{cfg: cfg, metrics: newMailMetrics(cfg.Registry), holder: string(domain.NewEventID())}, nil
}

// Prepare binds the email bucket and stores where a tenant seen for the
// first time starts: after the last write stored now. Run calls it when
// it was not called.
func (m *Mailer) Prepare(ctx context.Context) error {
	kv, err := m.bucket(ctx)
	if err != nil {
		return err
	}
	m.kv, m.feeds = kv, nil
	for i := range m.cfg.Tenants {
		f := newMailFeed(m, &m.cfg.Tenants[i])
		if _, _, err := f.load(ctx); err != nil {
			return fmt.Errorf("notify: email %s: %w", f.mail.Tenant, err)
		}
		m.feeds = append(m.feeds, f)
	}
	return nil
}

// Run sends until ctx ends (nil). A feed that fails starts again after a
// pause; it never stops the others.
func (m *Mailer) Run(ctx context.Context) error {
	if m.kv == nil {
		if err := m.Prepare(ctx); err != nil {
			return err
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, f := range m.feeds {
		g.Go(func() error {
			for ctx.Err() == nil {
				if err := f.run(ctx); err != nil && ctx.Err() == nil {
					f.log.Warn("email feed stopped; starting again", "err", err)
				}
				clock.Sleep(ctx, clock.System{}, time.Second)
			}
			return nil
		})
	}
	return g.Wait()
}

func (m *Mailer) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var kv jetstream.KeyValue
		if kv, err = m.cfg.JS.KeyValue(ctx, MailBucket); err == nil {
			return kv, nil
		}
		if kv, err = m.cfg.JS.CreateKeyValue(ctx, MailBucketConfig(m.cfg.Replicas)); err == nil {
			return kv, nil
		}
		if !errors.Is(err, jetstream.ErrBucketExists) && !clock.Sleep(ctx, clock.System{}, time.Duration(attempt+1)*200*time.Millisecond) {
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("notify: bucket %s: %w", MailBucket, err)
}

// requestStream is the stream of the tenant's requests shard.
func (m *Mailer) requestStream(t domain.TenantID) string {
	return kvstate.StreamOf(kvstate.RequestBucket(kvstate.ShardOf(t, m.cfg.Shards)))
}

// Email outcomes, the label of countersign_email_messages_total.
const (
	mailSent    = "sent"    // the server took the message
	mailFailed  = "failed"  // an attempt failed; it will be retried
	mailDropped = "dropped" // retried until MaxAge; given up
	// mailSuperseded: not sent before the request moved on; what the
	// later write asks is sent instead.
	mailSuperseded = "superseded"
)

type mailMetrics struct {
	messages *prometheus.CounterVec
	backlog  prometheus.Gauge
}

func newMailMetrics(reg prometheus.Registerer) *mailMetrics {
	m := &mailMetrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "countersign_email_messages_total",
			Help: "Email attempts by kind (request, reminder) and outcome: sent, failed (retried), dropped (given up after max age), superseded (the request moved on first)."},
			[]string{"kind", "outcome"}),
		backlog: prometheus.NewGauge(prometheus.GaugeOpts{Name: "countersign_email_retry_backlog",
			Help: "Email messages whose sending failed at least once and is being retried."}),
	}
	for _, c := range []prometheus.Collector{m.messages, m.backlog} {
		_ = reg.Register(c)
	}
	for _, k := range []string{kindRequest, kindReminder} {
		for _, o := range []string{mailSent, mailFailed, mailDropped, mailSuperseded} {
			m.messages.WithLabelValues(k, o)
		}
	}
	return m
}
