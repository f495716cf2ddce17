package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/signin"
)

// Check is the one validation of a config (SPEC §10): everything New
// refuses a config for, run before New opens anything, and nothing
// else. `countersign config check` calls it, New calls it first, and a
// reload calls it before it stores a file, so a file one passes is a file
// the others take, and the reverse.
//
// It checks the file's own rules (config.Validate, the tenants' domain
// form), then what the roles need of the process's environment: every
// variable the file names is set, and each secret has the shape its user
// takes (webhook secrets, the audit signing key, the auth callout seed),
// and the services' own config checks pass (webhook endpoints, sign-in).
// It reads the environment and nothing else: no file, no network, no
// NATS. What only the state can say (request_shards against the shards
// already stored) is refused at start only.
func Check(cfg *config.Config) error {
	_, err := check(cfg)
	return err
}

// checked is what Check derived that New goes on with.
type checked struct {
	tenants []*domain.Tenant
	seed    string // the auth callout issuer seed, with nats_url
}

func check(cfg *config.Config) (checked, error) {
	var c checked
	if err := cfg.Validate(); err != nil {
		return c, err
	}
	var err error
	if c.tenants, err = cfg.DomainTenants(); err != nil {
		return c, err
	}
	out, err := readOutside(cfg, nil)
	if err != nil {
		return c, err
	}
	for i := range out.endpoints {
		if err := out.endpoints[i].Validate(); err != nil { // notify.New's check, here before anything starts
			return c, fmt.Errorf("app: %w", err)
		}
	}
	if c.seed, err = calloutSeed(cfg); err != nil {
		return c, err
	}
	if has(cfg.Roles, "api") {
		err = checkAPI(cfg)
	}
	return c, err
}

// checkAPI checks what the api role reads at start: the audit signing
// key and the sign-in provider's settings.
func checkAPI(cfg *config.Config) error {
	if _, err := auditKey(cfg); err != nil {
		return err
	}
	if cfg.OIDC == nil {
		return nil
	}
	sc, err := providerConfig(cfg)
	if err == nil {
		_, err = signin.NewProvider(sc)
	}
	return err
}

// auditKey reads the checkpoint signer key from the variable
// audit_signing_key_env names ("" without it: the key kept in the state).
func auditKey(cfg *config.Config) (string, error) {
	if cfg.AuditSigningKeyEnv == "" {
		return "", nil
	}
	skey := os.Getenv(cfg.AuditSigningKeyEnv)
	if skey == "" {
		return "", fmt.Errorf("app: audit_signing_key_env: %s is not set", cfg.AuditSigningKeyEnv)
	}
	if _, err := audit.NewSigner(skey); err != nil {
		return "", fmt.Errorf("app: audit_signing_key_env: %s: %w", cfg.AuditSigningKeyEnv, err)
	}
	return skey, nil
}

// providerConfig is the sign-in provider's config, with the client secret
// read from the variable the file names.
func providerConfig(cfg *config.Config) (signin.Config, error) {
	o := cfg.OIDC
	secret, err := secretEnv("oidc.client_secret_env", o.ClientSecretEnv)
	if err != nil {
		return signin.Config{}, err
	}
	base := strings.TrimRight(cfg.PublicURL, "/")
	return signin.Config{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: secret,
		Claim: o.Claim, RedirectURL: base + httpapi.CallbackPath}, nil
}

// calloutSeed reads the auth callout issuer seed from the variable
// auth_callout_seed_env names; it counts only with nats_url.
func calloutSeed(cfg *config.Config) (string, error) {
	if cfg.AuthCalloutSeedEnv == "" || cfg.NATSURL == "" {
		return "", nil
	}
	seed := os.Getenv(cfg.AuthCalloutSeedEnv)
	if seed == "" {
		return "", fmt.Errorf("app: auth_callout_seed_env: %s is not set", cfg.AuthCalloutSeedEnv)
	}
	if _, err := nkeys.FromSeed([]byte(seed)); err != nil {
		return "", fmt.Errorf("app: auth_callout_seed_env: %s does not hold an nkey seed: %w", cfg.AuthCalloutSeedEnv, err)
	}
	return seed, nil
}
