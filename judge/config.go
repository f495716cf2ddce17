package judge

import (
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Defaults applied by [New] and [NewWithModel] to zero Config fields.
const (
	DefaultTimeout         = 20 * time.Second
	DefaultBreakerFailures = 3
	DefaultBreakerCooldown = 30 * time.Second
)

// Config configures one tenant's judge.
type Config struct {
	// BaseURL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1;
	// the client posts to BaseURL + "/chat/completions".
	BaseURL string
	// Model is the model name sent with every completion.
	Model string
	// APIKey is sent as a Bearer token; empty sends no Authorization header
	// (Ollama).
	APIKey string
	// Timeout bounds one model call; the request's own ctx deadline applies
	// too, whichever is sooner. Default 20s.
	Timeout time.Duration
	// HTTPClient is used for the model calls. Default: a client with no
	// timeout of its own (the ctx bounds each call).
	HTTPClient *http.Client
	// Observe, if set, is called once per Judge or Review call with the
	// Reason and the model call's latency (0 if no call was made).
	Observe func(reason string, latency time.Duration)
	// BreakerFailures is how many consecutive failures (timeout, HTTP error,
	// transport error) open the circuit breaker. Default 3.
	BreakerFailures int
	// BreakerCooldown is how long the breaker stays open before one trial
	// call is let through (half-open). Default 30s.
	BreakerCooldown time.Duration
}

func (c *Config) setDefaults() {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.BreakerFailures <= 0 {
		c.BreakerFailures = DefaultBreakerFailures
	}
	if c.BreakerCooldown <= 0 {
		c.BreakerCooldown = DefaultBreakerCooldown
	}
}

// Validate reports a config that cannot work: it returns an error wrapping
// [ErrConfig]. [New] does not call it (an invalid config makes every call
// escalate with Reason "http_error"); call it when loading configuration.
func (c Config) Validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: base URL %q is not an absolute http(s) URL", ErrConfig, c.BaseURL)
	}
	if c.Model == "" {
		return fmt.Errorf("%w: model is empty", ErrConfig)
	}
	if c.Timeout < 0 || c.BreakerFailures < 0 || c.BreakerCooldown < 0 {
		return fmt.Errorf("%w: timeout, breaker failures and cooldown must not be negative", ErrConfig)
	}
	return nil
}
