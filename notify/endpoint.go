package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
)

// Formats of an endpoint.
const (
	FormatCloudEvents = "cloudevents"
	FormatSlack       = "slack"
)

// Endpoint is one webhook of a tenant.
type Endpoint struct {
	Tenant domain.TenantID
	URL    string
	// Key signs every POST (Standard Webhooks); nil sends it unsigned
	// (allowed for format slack only: Slack's incoming webhooks do not
	// check signatures).
	Key []byte
	// Events are short types (request.created), each one of
	// events.ShortTypes (the list config checks too); empty: every event.
	Events []string
	// Format is FormatCloudEvents (default) or FormatSlack.
	Format string
	// Interactive makes Slack buttons post clicks back to countersign
	// (the tenant has slack_signing_secret_env); otherwise they open the
	// decision links.
	Interactive bool
}

// Validate checks the endpoint. Errors: ErrConfig.
func (e *Endpoint) Validate() error {
	if e.Format == "" {
		e.Format = FormatCloudEvents
	}
	u, err := url.Parse(e.URL)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return fmt.Errorf("%w: webhook url %q must be an absolute http(s) URL", ErrConfig, e.URL)
	case e.Format != FormatCloudEvents && e.Format != FormatSlack:
		return fmt.Errorf("%w: webhook format %q (cloudevents, slack)", ErrConfig, e.Format)
	case e.Format == FormatCloudEvents && len(e.Key) == 0:
		return fmt.Errorf("%w: webhook %s: a cloudevents endpoint needs secret_env", ErrConfig, e.URL)
	}
	for _, t := range e.Events {
		if types := events.ShortTypes(); !slices.Contains(types, t) {
			return fmt.Errorf("%w: webhook event %q (one of %s)", ErrConfig, t, strings.Join(types, ", "))
		}
	}
	return nil
}

// wants reports whether the endpoint subscribes to event type typ.
func (e *Endpoint) wants(typ string) bool {
	return len(e.Events) == 0 || slices.Contains(e.Events, events.ShortType(typ))
}

// id names the endpoint in the progress bucket: a hash of what it is.
func (e *Endpoint) id() string {
	h := sha256.Sum256([]byte(string(e.Tenant) + "\n" + e.Format + "\n" + e.URL))
	return hex.EncodeToString(h[:8])
}
