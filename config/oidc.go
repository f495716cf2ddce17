package config

import (
	"net/url"
	"regexp"
	"strings"
)

// OIDCConfig is `oidc:`, the OpenID provider people sign in with (SPEC §13).
type OIDCConfig struct {
	// Issuer is the provider's issuer URL (https, or http on loopback for
	// development); its /.well-known/openid-configuration is read.
	Issuer string `yaml:"issuer"`
	// ClientID is the client registered at the provider, with the redirect
	// URI <public_url>/inbox/signin/callback.
	ClientID string `yaml:"client_id"`
	// ClientSecretEnv names the variable holding the client secret.
	ClientSecretEnv string `yaml:"client_secret_env"`
	// Claim names the ID token claim matched against members' email.
	// Default email.
	Claim string `yaml:"claim"`
}

var claimName = regexp.MustCompile(`^[A-Za-z0-9_:.-]{1,64}$`)

// validateOIDC: issuer an absolute URL, a client id and secret variable,
// a claim name, and a public_url to redirect back to.
func (c *Config) validateOIDC() error {
	o := c.OIDC
	if o == nil {
		return nil
	}
	if o.Claim == "" {
		o.Claim = "email"
	}
	u, err := url.Parse(o.Issuer)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))):
		return fmtErr("oidc: issuer %q must be an https URL (http only on loopback)", o.Issuer)
	case strings.TrimSpace(o.ClientID) == "":
		return fmtErr("oidc: client_id is required")
	case o.ClientSecretEnv == "":
		return fmtErr("oidc: client_secret_env is required (the variable holding the client secret)")
	case !claimName.MatchString(o.Claim):
		return fmtErr("oidc: claim %q is not a claim name", o.Claim)
	case c.PublicURL == "":
		return fmtErr("oidc: needs public_url (the redirect URI is <public_url>/inbox/signin/callback)")
	}
	return nil
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}
