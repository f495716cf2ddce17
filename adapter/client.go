package adapter

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of the options, in one place.
const (
	// DefaultMargin is kept back inside the wait limit to fetch the final
	// state after the request's deadline and to cancel and return.
	DefaultMargin = 15 * time.Second
	// DefaultPollWait is the long-poll wait of one GET (the server caps 60s).
	DefaultPollWait = 30 * time.Second
	// DefaultRequestTimeout bounds one submit, claim or cancel round trip.
	DefaultRequestTimeout = 15 * time.Second
	// DefaultCancelTimeout bounds the best-effort cancel of an abandoned call.
	DefaultCancelTimeout = 5 * time.Second
	// DefaultUnreachableLimit bounds how long a submit that gets no answer
	// is retried.
	DefaultUnreachableLimit = 30 * time.Second
	// DefaultBackoffMin and DefaultBackoffMax bound the jittered retry delay.
	DefaultBackoffMin = 100 * time.Millisecond
	DefaultBackoffMax = 5 * time.Second
)

// DefaultConnectRetries is the wait before each retry of a submit whose
// connection failed before any answer (refused, no such host): a few
// retries over about 9.5 s, then the call is given up as unreachable, so a
// server that is down does not hold the harness until its wait limit.
var DefaultConnectRetries = []time.Duration{
	500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second,
}

// Client is the agent side of countersign for one token (one agent). It is
// safe for concurrent use; each Do is independent.
type Client struct {
	base           *url.URL
	token          string
	http           *http.Client
	waitLimit      time.Duration
	margin         time.Duration
	pollWait       time.Duration
	requestTimeout time.Duration
	cancelTimeout  time.Duration
	unreachable    time.Duration
	backoffMin     time.Duration
	backoffMax     time.Duration
	connectRetries []time.Duration
	now            func() time.Time
}

// Option tunes a Client. Options validate their argument; New returns the
// first error.
type Option func(*Client) error

// New returns a Client for the countersign server at baseURL (for example
// http://127.0.0.1:8080) that authenticates with token. It makes no request.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("adapter: server URL %q: want http(s)://host[:port]", baseURL)
	}
	if token == "" {
		return nil, fmt.Errorf("adapter: empty token")
	}
	c := &Client{
		base:           u,
		token:          token,
		http:           &http.Client{},
		margin:         DefaultMargin,
		pollWait:       DefaultPollWait,
		requestTimeout: DefaultRequestTimeout,
		cancelTimeout:  DefaultCancelTimeout,
		unreachable:    DefaultUnreachableLimit,
		backoffMin:     DefaultBackoffMin,
		backoffMax:     DefaultBackoffMax,
		connectRetries: DefaultConnectRetries,
		now:            time.Now,
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func positive(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("adapter: %s must be positive, got %v", name, d)
	}
	return nil
}

// WithWaitLimit tells the adapter how long the harness lets one call wait,
// counted from the start of Do (default: no limit besides the caller's
// context deadline, which counts as one too). The requested timeout is
// shortened to fit inside it with the margin; Do gives up, cancels the
// request and reports "could not be obtained" half a margin before it.
func WithWaitLimit(d time.Duration) Option {
	return func(c *Client) error { c.waitLimit = d; return positive("wait limit", d) }
}

// WithMargin sets the time kept back inside the wait limit (default
// DefaultMargin, and never more than a quarter of the limit).
func WithMargin(d time.Duration) Option {
	return func(c *Client) error { c.margin = d; return positive("margin", d) }
}

// WithPollWait sets the ?wait= of each long poll, 1s to 60s (default
// DefaultPollWait).
func WithPollWait(d time.Duration) Option {
	return func(c *Client) error {
		if d < time.Second || d > 60*time.Second {
			return fmt.Errorf("adapter: poll wait must be within 1s..60s, got %v", d)
		}
		c.pollWait = d
		return nil
	}
}

// WithRequestTimeout bounds one submit, claim or cancel round trip
// (default DefaultRequestTimeout); a long poll gets its wait on top.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *Client) error { c.requestTimeout = d; return positive("request timeout", d) }
}

// WithCancelTimeout bounds the best-effort cancel sent when a call is
// abandoned or the wait limit passes (default DefaultCancelTimeout).
func WithCancelTimeout(d time.Duration) Option {
	return func(c *Client) error { c.cancelTimeout = d; return positive("cancel timeout", d) }
}

// WithUnreachableLimit bounds how long Do retries a submit that gets no
// answer (connection errors, 5xx, 429) before it reports ErrUnreachable
// (default DefaultUnreachableLimit). Once a request exists, failed polls
// are retried until the wait limit instead: a restarting server is not a
// decision.
func WithUnreachableLimit(d time.Duration) Option {
	return func(c *Client) error { c.unreachable = d; return positive("unreachable limit", d) }
}

// WithConnectRetries sets the waits before each retry of a submit whose
// connection failed before any answer: after the last, Do gives up with
// ErrUnreachable (default DefaultConnectRetries; none: give up at once). A
// server that answered, even slowly or with a 5xx, is retried under
// WithUnreachableLimit instead, and a request that exists is waited for.
func WithConnectRetries(waits ...time.Duration) Option {
	return func(c *Client) error {
		for _, d := range waits {
			if d < 0 {
				return fmt.Errorf("adapter: connect retry wait must not be negative, got %v", d)
			}
		}
		c.connectRetries = append([]time.Duration{}, waits...)
		return nil
	}
}

// WithBackoff sets the bounds of the jittered retry delay.
func WithBackoff(min, max time.Duration) Option {
	return func(c *Client) error {
		if min <= 0 || max < min {
			return fmt.Errorf("adapter: backoff wants 0 < min <= max, got %v, %v", min, max)
		}
		c.backoffMin, c.backoffMax = min, max
		return nil
	}
}

// WithHTTPClient sets the HTTP client (default: a plain http.Client; the
// adapter sets its own per-request deadlines).
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) error {
		if h == nil {
			return fmt.Errorf("adapter: nil HTTP client")
		}
		c.http = h
		return nil
	}
}

// WithClock sets the clock by which decision.expires_at is judged (default
// time.Now). It is corrected per call by the server's Date header. Waiting
// limits use real timers, not this clock.
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		if now == nil {
			return fmt.Errorf("adapter: nil clock")
		}
		c.now = now
		return nil
	}
}
