package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// The one client, and the people who can sign in (password Password).
const (
	ClientID     = "countersign"
	ClientSecret = "client-secret"
	User         = "test-user2" // email test-user2@zitadel.ch
	Email        = "test-user2@zitadel.ch"
	Password     = "verysecure"
)

// Provider is a running OpenID provider.
type Provider struct {
	Issuer  string
	Storage *storage.Storage
	keys    *keys
	srv     *httptest.Server
	mu      sync.Mutex
	redir   []string
	forge   func(raw string) string
}

// Start runs a provider until the test ends.
func Start(t testing.TB) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: "http://" + ln.Addr().String(), keys: newKeys(t)}
	p.Storage = storage.NewStorageWithClients(storage.NewUserStore(p.Issuer),
		map[string]*storage.Client{ClientID: storage.WebClient(ClientID, ClientSecret)})
	provider, err := op.NewProvider(&op.Config{CryptoKey: sha256.Sum256([]byte("oidctest")), CodeMethodS256: true,
		AuthMethodPost: true, SupportedUILocales: []language.Tag{language.English},
		DeviceAuthorization: op.DeviceAuthorizationConfig{Lifetime: 5 * time.Minute, PollInterval: time.Second,
			UserFormPath: "/device", UserCode: op.UserCodeBase20}},
		&store{Storage: p.Storage, p: p}, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	login := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux.Handle("/login/username", login.HandlerFunc(p.login(op.AuthCallbackURL(provider))))
	mux.Handle("/", provider)
	p.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: p.forging(mux)}}
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// AllowRedirect registers a redirect URI of the client.
func (p *Provider) AllowRedirect(uri string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.redir = append(p.redir, uri)
}

// Rotate signs from now on with a new key and drops the old one from the
// JWKS.
func (p *Provider) Rotate(t testing.TB) { p.keys.rotate(t) }

// Forge makes every later token answer carry f(the real ID token) in its
// place (nil: stop).
func (p *Provider) Forge(f func(raw string) string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forge = f
}

// Approve completes the device flow of userCode as User.
func (p *Provider) Approve(t testing.TB, userCode string) {
	t.Helper()
	if err := p.Storage.CompleteDeviceAuthorization(context.Background(), userCode, "id2"); err != nil {
		t.Fatalf("oidctest: approve %s: %v", userCode, err)
	}
}

// SigningKey is the key ID tokens are signed with now.
func (p *Provider) SigningKey() (*rsa.PrivateKey, string) {
	k := p.keys.current()
	return k.priv, k.id
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html><html><head><title>Provider sign-in</title></head><body>
<form method="post" action="/login/username"><input type="hidden" name="id" value="{{.ID}}">
<label>Username <input id="username" name="username"></label><label>Password <input id="password" name="password" type="password"></label>
<button id="submit" type="submit">Sign in</button><p id="error">{{.Error}}</p></form></body></html>`))

// login is the provider's own sign-in form.
func (p *Provider) login(callback func(context.Context, string) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.FormValue("authRequestID")
		if r.Method == http.MethodPost {
			id = r.FormValue("id")
			err := p.Storage.CheckUsernamePassword(r.FormValue("username"), r.FormValue("password"), id)
			if err == nil {
				http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
				return
			}
			_ = loginPage.Execute(w, map[string]string{"ID": id, "Error": err.Error()})
			return
		}
		_ = loginPage.Execute(w, map[string]string{"ID": id})
	}
}

// store is the example storage with one client for both flows, its
// redirect URIs registered at run time, and rotatable keys.
type store struct {
	*storage.Storage
	p *Provider
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c, p: s.p}, nil
}

func (s *store) SigningKey(context.Context) (op.SigningKey, error) { return s.p.keys.current(), nil }

func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *store) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{public{s.p.keys.current()}}, nil
}

type client struct {
	op.Client
	p *Provider
}

func (c client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeDeviceCode}
}

func (c client) RedirectURIs() []string {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return append([]string(nil), c.p.redir...)
}

func (c client) DevMode() bool { return true } // http redirect URIs on loopback

// keys holds the current signing key.
type keys struct {
	mu  sync.Mutex
	n   int
	key *key
}

type key struct {
	id   string
	priv *rsa.PrivateKey
}

func (k *key) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *key) ID() string                                  { return k.id }
func (k *key) Key() any                                    { return k.priv }

// public is a key as the JWKS shows it.
type public struct{ k *key }

func (p public) ID() string                         { return p.k.id }
func (p public) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p public) Use() string                        { return "sig" }
func (p public) Key() any                           { return &p.k.priv.PublicKey }

func newKeys(t testing.TB) *keys {
	k := &keys{}
	k.rotate(t)
	return k
}

func (k *keys) rotate(t testing.TB) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n++
	k.key = &key{id: fmt.Sprintf("key-%d", k.n), priv: priv}
}

func (k *keys) current() *key {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.key
}
