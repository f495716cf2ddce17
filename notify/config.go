package notify

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/countersign/countersign/clock"
)

// Config wires a Worker.
type Config struct {
	// JS reads the state's streams and keeps the progress. Required.
	JS jetstream.JetStream
	// Endpoints to deliver to. Each is validated.
	Endpoints []Endpoint
	// Links, when set, adds decision links to the events of requests
	// waiting on a person.
	Links *Links
	// Replicas of the progress bucket. Default 1.
	Replicas int
	// Shards is request_shards (kvstate's shards.go): which stream holds a
	// tenant's requests. Default 1.
	Shards int
	// Tuning bounds attempts and retries; zero fields keep their defaults.
	Tuning Tuning
	// Registry receives the delivery metrics. Default: a registry of its own.
	Registry prometheus.Registerer
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// Clock times the feeds' leases. Default the system's.
	Clock clock.Clock
	// Name, when set, is a member's name (approvals.Service.PersonName):
	// Slack messages name people by it, the id beside it (SPEC §10).
	Name Names
}

// Tuning bounds delivery. Tests shorten it; deployments keep the defaults.
type Tuning struct {
	// Timeout bounds one attempt, connecting to reading the answer.
	// Default 10s.
	Timeout time.Duration
	// BackoffBase is the wait after the first failure; each failure
	// doubles it, up to BackoffMax, with jitter. Default 5s.
	BackoffBase time.Duration
	// BackoffMax caps the wait between attempts. Default 1h.
	BackoffMax time.Duration
	// MaxAge is how long after the event it is retried. Default 24h.
	MaxAge time.Duration
	// MaxResponse bounds the bytes of an answer read. Default 64 KiB.
	MaxResponse int64
	// Window bounds the events one endpoint holds undelivered; the
	// endpoint's reader waits while it is full. Default 10000.
	Window int
	// LeaseTTL is how long a process holds an endpoint without renewing.
	// Default 30s.
	LeaseTTL time.Duration
	// TLS, when set, configures the client's TLS (tests trust their own
	// receiver's certificate with it). Default: the system's roots.
	TLS *tls.Config
}

func (t *Tuning) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.Timeout, 10*time.Second)
	def(&t.BackoffBase, 5*time.Second)
	def(&t.BackoffMax, time.Hour)
	def(&t.MaxAge, 24*time.Hour)
	def(&t.LeaseTTL, 30*time.Second)
	if t.MaxResponse <= 0 {
		t.MaxResponse = 64 << 10
	}
	if t.Window <= 0 {
		t.Window = 10000
	}
}

func (c *Config) setDefaults() {
	c.Tuning.setDefaults()
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
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
func (c *Config) Validate() error {
	if c.JS == nil {
		return fmt.Errorf("%w: JS is required", ErrConfig)
	}
	for i := range c.Endpoints {
		if err := c.Endpoints[i].Validate(); err != nil {
			return err
		}
	}
	if c.Links != nil && (c.Links.PublicURL == "" || len(c.Links.Secret) == 0) {
		return fmt.Errorf("%w: links need a public URL and a secret", ErrConfig)
	}
	return nil
}
