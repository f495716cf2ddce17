package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// Webhook formats.
const (
	FormatCloudEvents = "cloudevents"
	FormatSlack       = "slack"
)

// notify checks the tenant's webhooks and Slack settings (SPEC §10). The
// variables they name are read when the server starts, not here.
func (tc *TenantConfig) notify(*domain.Tenant) error {
	for _, w := range tc.Webhooks {
		if err := w.validate(); err != nil {
			return err
		}
	}
	if tc.Email != nil {
		if err := tc.Email.validate(); err != nil {
			return err
		}
	}
	seen := map[string]string{}
	for _, m := range tc.Members {
		if m.SlackUserID == "" {
			continue
		}
		if other, dup := seen[m.SlackUserID]; dup {
			return lineErr(m.line, "slack_user_id %q is also member %q's", m.SlackUserID, other)
		}
		seen[m.SlackUserID] = m.ID
	}
	return nil
}

func (w *WebhookConfig) validate() error {
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return lineErr(w.line, "webhook url %q must be an absolute http(s) URL", w.URL)
	}
	if w.Format == "" {
		w.Format = FormatCloudEvents
	}
	if w.Format != FormatCloudEvents && w.Format != FormatSlack {
		return lineErr(w.line, "webhook format %q must be cloudevents or slack", w.Format)
	}
	if w.Format == FormatCloudEvents && w.SecretEnv == "" {
		return lineErr(w.line, "webhook %s: secret_env is required (events are signed)", w.URL)
	}
	for _, e := range w.Events {
		if types := events.ShortTypes(); !slices.Contains(types, e) {
			return lineErr(w.line, "webhook event %q must be one of %s", e, strings.Join(types, ", "))
		}
	}
	return nil
}

// validateLinks: public_url is an absolute http(s) URL and comes with
// link_secret_env.
func (c *Config) validateLinks() error {
	if c.PublicURL == "" {
		return nil
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmtErr("public_url %q must be an absolute http(s) URL without query", c.PublicURL)
	}
	if c.LinkSecretEnv == "" {
		return fmtErr("public_url needs link_secret_env (the key of decision links)")
	}
	return nil
}

func fmtErr(format string, args ...any) error { return fmt.Errorf("config: "+format, args...) }
