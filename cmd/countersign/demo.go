package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/countersign/countersign/config"
)

// Environment of the demo's notifications: with no countersign.yaml,
// decision links are on (a random link key per process unless
// COUNTERSIGN_LINK_SECRET is set), and COUNTERSIGN_DEMO_WEBHOOK_URL adds a
// webhook to the demo tenant, format COUNTERSIGN_DEMO_WEBHOOK_FORMAT
// (cloudevents or slack), signed with COUNTERSIGN_DEMO_WEBHOOK_SECRET (a
// random one, printed, when unset).
const (
	envLinkSecret    = "COUNTERSIGN_LINK_SECRET"
	envWebhookURL    = "COUNTERSIGN_DEMO_WEBHOOK_URL"
	envWebhookFormat = "COUNTERSIGN_DEMO_WEBHOOK_FORMAT"
	envWebhookSecret = "COUNTERSIGN_DEMO_WEBHOOK_SECRET"
)

// demoNotify turns on the demo's decision links and its optional webhook,
// and returns what to print about them.
func demoNotify(cfg *config.Config) []string {
	var lines []string
	if cfg.PublicURL == "" && cfg.Listen != "" && !strings.HasSuffix(cfg.Listen, ":0") { // a port chosen at start has no URL yet
		cfg.PublicURL, cfg.LinkSecretEnv = "http://"+cfg.Listen, envLinkSecret
		if ensureSecret(envLinkSecret) {
			lines = append(lines, "decision links signed with a random key of this process ("+envLinkSecret+" keeps one across restarts)")
		}
	}
	url := os.Getenv(envWebhookURL)
	if url == "" {
		return lines
	}
	format := os.Getenv(envWebhookFormat)
	if format == "" {
		format = "cloudevents"
	}
	cfg.Tenants[0].Webhooks = append(cfg.Tenants[0].Webhooks, &config.WebhookConfig{URL: url, SecretEnv: envWebhookSecret, Format: format})
	if ensureSecret(envWebhookSecret) {
		lines = append(lines, fmt.Sprintf("webhook %s (%s) signed with %s=%s", url, format, envWebhookSecret, os.Getenv(envWebhookSecret)))
	} else {
		lines = append(lines, fmt.Sprintf("webhook %s (%s) signed with $%s", url, format, envWebhookSecret))
	}
	return lines
}

// ensureSecret sets env to a random key when it is unset, and reports
// whether it did.
func ensureSecret(env string) bool {
	if os.Getenv(env) != "" {
		return false
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	_ = os.Setenv(env, hex.EncodeToString(b))
	return true
}
