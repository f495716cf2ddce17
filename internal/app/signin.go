package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/httpapi"
	"github.com/countersign/countersign/signin"
)

// signIn builds sign-in with the configured OpenID provider (SPEC §13),
// or nil without `oidc:`. Sign-in events go to the log until the audit
// log takes them (httpapi.SignInConfig.Record).
func (a *App) signIn(ctx context.Context, cfg *config.Config) (*httpapi.SignInConfig, error) {
	o := cfg.OIDC
	if o == nil {
		return nil, nil
	}
	secret, err := secretEnv("oidc.client_secret_env", o.ClientSecretEnv)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(cfg.PublicURL, "/")
	p, err := signin.NewProvider(signin.Config{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: secret,
		Claim: o.Claim, RedirectURL: base + httpapi.CallbackPath})
	if err != nil {
		return nil, err
	}
	st, err := signin.OpenStore(ctx, a.Broker.JS, a.Broker.Replicas, nil)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	return &httpapi.SignInConfig{Provider: p, Store: st, Secure: strings.HasPrefix(base, "https://")}, nil
}
