package signin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Config is the provider's side of `oidc:` (SPEC §13).
type Config struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// Claim names the ID token claim matched against members' email.
	// Default "email".
	Claim string
	// RedirectURL is the callback's absolute URL (<public_url>/inbox/signin/callback).
	RedirectURL string
	// HTTPClient talks to the provider. Default a client with a 10s timeout.
	HTTPClient *http.Client
}

// Identity is who the provider says signed in.
type Identity struct {
	Subject string
	Value   string // the configured claim's value
	// Name is the token's name claim, when it holds printable text of at
	// most 128 characters; "" otherwise. It names a member whose config
	// gives no name (SPEC §10 "People by name").
	Name string
}

// Provider is the client of one OpenID provider. Discovery happens at the
// first use, and again after a failure. Safe for concurrent use.
type Provider struct {
	cfg Config
	mu  sync.Mutex
	p   *oidc.Provider
}

// NewProvider checks cfg. Errors: ErrConfig.
func NewProvider(cfg Config) (*Provider, error) {
	if cfg.Claim == "" {
		cfg.Claim = "email"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, fmt.Errorf("%w: issuer, client_id and the redirect URL are required", ErrConfig)
	}
	return &Provider{cfg: cfg}, nil
}

// Issuer is the configured issuer.
func (p *Provider) Issuer() string { return p.cfg.Issuer }

func (p *Provider) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, p.cfg.HTTPClient)
}

// discover returns the provider's metadata, fetching it once.
func (p *Provider) discover(ctx context.Context) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.p != nil {
		return p.p, nil
	}
	op, err := oidc.NewProvider(p.ctx(context.WithoutCancel(ctx)), p.cfg.Issuer) // the key set outlives this request
	if err != nil {
		return nil, fmt.Errorf("signin: discovery of %s: %w", p.cfg.Issuer, err)
	}
	p.p = op
	return op, nil
}

func (p *Provider) oauth(op *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: op.Endpoint(),
		RedirectURL: p.cfg.RedirectURL, Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// AuthURL is where the browser goes to sign in for flow f under state.
func (p *Provider) AuthURL(ctx context.Context, state string, f Flow) (string, error) {
	op, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return p.oauth(op).AuthCodeURL(state, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), nil
}

// Exchange redeems code with f's verifier and returns the verified
// identity. Errors: ErrRefused (wrapping why), or a transport error.
func (p *Provider) Exchange(ctx context.Context, code string, f Flow) (Identity, error) {
	op, err := p.discover(ctx)
	if err != nil {
		return Identity{}, err
	}
	tok, err := p.oauth(op).Exchange(p.ctx(ctx), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return Identity{}, fmt.Errorf("%w: code exchange: %w", ErrRefused, err)
	}
	return p.identity(ctx, op, tok, f.Nonce)
}

// identity verifies tok's ID token (and its nonce when nonce is not
// empty) and reads the claim, from the ID token or else from userinfo.
func (p *Provider) identity(ctx context.Context, op *oidc.Provider, tok *oauth2.Token, nonce string) (Identity, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, fmt.Errorf("%w: no id_token", ErrRefused)
	}
	idt, err := op.Verifier(&oidc.Config{ClientID: p.cfg.ClientID}).Verify(p.ctx(ctx), raw)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if nonce != "" && idt.Nonce != nonce {
		return Identity{}, fmt.Errorf("%w: nonce mismatch", ErrRefused)
	}
	claims := map[string]any{}
	_ = idt.Claims(&claims)
	if _, ok := claims[p.cfg.Claim]; !ok {
		if claims, err = p.userinfo(ctx, op, tok, idt.Subject); err != nil {
			return Identity{}, err
		}
	} else if _, ok := claims["name"]; !ok {
		// The name only names; a provider that keeps it for userinfo
		// gives it there, and a failure there refuses nothing.
		if more, err := p.userinfo(ctx, op, tok, idt.Subject); err == nil {
			claims["name"] = more["name"]
		}
	}
	return p.claim(idt.Subject, claims)
}

// userinfo reads the claims of the userinfo endpoint, whose sub must be
// the ID token's (OpenID Connect Core §5.3.2).
func (p *Provider) userinfo(ctx context.Context, op *oidc.Provider, tok *oauth2.Token, sub string) (map[string]any, error) {
	ui, err := op.UserInfo(p.ctx(ctx), oauth2.StaticTokenSource(tok))
	if err != nil {
		return nil, fmt.Errorf("%w: userinfo: %w", ErrRefused, err)
	}
	if ui.Subject != sub {
		return nil, fmt.Errorf("%w: userinfo names another subject", ErrRefused)
	}
	claims := map[string]any{}
	_ = ui.Claims(&claims)
	return claims, nil
}

// claim reads the configured claim. With claim email it counts only when
// the provider says email_verified is the boolean true: false, absent or
// anything else is refused (SPEC §13: sign-in fails closed).
func (p *Provider) claim(sub string, claims map[string]any) (Identity, error) {
	v, _ := claims[p.cfg.Claim].(string)
	if strings.TrimSpace(v) == "" {
		return Identity{}, fmt.Errorf("%w: the token has no %s claim", ErrRefused, p.cfg.Claim)
	}
	if verified, _ := claims["email_verified"].(bool); p.cfg.Claim == "email" && !verified {
		return Identity{Subject: sub, Value: v}, fmt.Errorf("%w: the provider does not say it verified %s", ErrUnverified, v)
	}
	return Identity{Subject: sub, Value: v, Name: nameClaim(claims)}, nil
}

// nameClaim is the claims' name, trimmed, or "" when it is absent, longer
// than 128 characters or holds a control or format character.
func nameClaim(claims map[string]any) string {
	n, _ := claims["name"].(string)
	n = strings.TrimSpace(n)
	if !utf8.ValidString(n) || utf8.RuneCountInString(n) > 128 {
		return ""
	}
	for _, r := range n {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ""
		}
	}
	return n
}

// DeviceAuth starts a device authorization grant (RFC 8628 §3.1).
func (p *Provider) DeviceAuth(ctx context.Context) (*oauth2.DeviceAuthResponse, error) {
	op, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	if op.Endpoint().DeviceAuthURL == "" {
		return nil, fmt.Errorf("signin: %s offers no device authorization endpoint", p.cfg.Issuer)
	}
	return p.oauth(op).DeviceAuth(p.ctx(ctx))
}

// DeviceToken polls the token endpoint for deviceCode every interval until
// the person finishes (the verified identity), the provider refuses
// (ErrRefused) or ctx ends (ErrPending).
func (p *Provider) DeviceToken(ctx context.Context, deviceCode string, interval time.Duration) (Identity, error) {
	op, err := p.discover(ctx)
	if err != nil {
		return Identity{}, err
	}
	da := &oauth2.DeviceAuthResponse{DeviceCode: deviceCode, Interval: int64(interval / time.Second)}
	tok, err := p.oauth(op).DeviceAccessToken(p.ctx(ctx), da)
	if ctx.Err() != nil {
		return Identity{}, ErrPending
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return Identity{}, fmt.Errorf("%w: %s", ErrRefused, re.ErrorCode)
	}
	if err != nil {
		return Identity{}, err
	}
	return p.identity(ctx, op, tok, "")
}
